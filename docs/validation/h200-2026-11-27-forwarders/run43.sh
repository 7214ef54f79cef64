#!/bin/bash
# Call 2: (a) rt.cu: what bounds whole-device round trips; (b) gpuio forward NOPs, 256/1024 slots (same-run figure);
# (c) queue 64 B main vs rounds, interleaved again.
S=./.gpucheck/m
T0=$(date +%s)
mkdir -p /tmp/gc/gcache; cp -r .gpucheck/gc/gcache/. /tmp/gc/gcache/ 2>/dev/null
export XDG_CACHE_HOME=/tmp/gc/gcache
R=$OUT/r; mkdir -p $R
pack() { (cd $OUT && tar czf r.tgz r); tar czf $OUT/gcache.tgz -C /tmp/gc gcache; }
nvcc -O3 -arch=sm_90 -o /tmp/rt run43-rt.cu > $R/build.log 2>&1; echo build rc=$? >> $R/build.log
timeout 150 /tmp/rt > $R/rt.txt 2>&1; echo "rc=$? $(( $(date +%s)-T0 )) s" >> $R/rt.txt
cat $R/build.log $R/rt.txt >> $R/summary.txt
pack
for sl in 256 1024; do
  t0=$(date +%s)
  timeout 90 $S/gpuio-main run nops.cu --backend cuda/forward --grid 132 --block 1024 --slots $sl --arg 16 --arg 0 > $R/n-$sl.log 2>&1
  echo "== nops slots $sl rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
  tail -5 $R/n-$sl.log >> $R/summary.txt
done
pack
export GPUIO_BENCH_QUEUE_SIZES=64
for b in rounds main rounds main; do
  left=$(( T0 + 560 - $(date +%s) )); [ $left -lt 40 ] && break
  t0=$(date +%s)
  timeout $left $S/gpuio-$b bench --only queues --backend cuda --repeats 3 > $R/q-$b-$t0.log 2>&1
  echo "== queues $b rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
  grep -E "^  queue to host, .* messages" $R/q-$b-$t0.log >> $R/summary.txt
  pack
done
cat $R/summary.txt
