#!/bin/bash
# Session 2026-11-27c, call 7: fill (reservation without reloads, fill without divisions)
# against cells (3472419): selftest, then 64 B and 4 KiB to the host interleaved.
S=./.gpucheck/m
T0=$(date +%s)
mkdir -p /tmp/gc/gcache; cp -r .gpucheck/gc/gcache/. /tmp/gc/gcache/
export XDG_CACHE_HOME=/tmp/gc/gcache
R=$OUT/r; mkdir -p $R
pack() { (cd $OUT && tar czf r.tgz r); }
timeout 300 $S/gpuio-fill selftest --backend cuda > $R/selftest-fill.log 2>&1
echo "== selftest fill (cold compile) rc=$? $(( $(date +%s)-T0 )) s" >> $R/summary.txt
tail -1 $R/selftest-fill.log >> $R/summary.txt; grep -E "^FAIL|^fail" $R/selftest-fill.log | head >> $R/summary.txt
pack
export GPUIO_BENCH_QUEUE_SIZES=64,4096
for b in fill cells fill cells; do
  left=$(( T0 + 540 - $(date +%s) )); [ $left -lt 40 ] && break
  t0=$(date +%s)
  timeout $left $S/gpuio-$b bench --only queues --backend cuda --repeats 3 > $R/q-$b-$t0.log 2>&1
  echo "== queues $b rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
  grep -E "^  queue to host, .* messages" $R/q-$b-$t0.log >> $R/summary.txt
  pack
done
cat $R/summary.txt
