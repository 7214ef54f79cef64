#!/bin/bash
# Session 2026-11-26 (night), call 3: the working tree (turns move to the next ring
# when stuck; a uniform group's fill by rounds of shuffles) - selftest, the queue to
# the host against 5458515 in one call, then the whole bench.
S=./.gpucheck/m
mkdir -p /tmp/gc && cp -r .gpucheck/gc/gcache /tmp/gc/ 2>/dev/null
rm -f /tmp/gc/gcache/calibration.json
export XDG_CACHE_HOME=/tmp/gc/gcache
R=$OUT/r; mkdir -p $R
pack() { (cd $OUT && tar czf r.tgz r); (cd /tmp/gc && tar czf $OUT/gcache.tgz gcache); }
t0=$(date +%s)
timeout 240 $S/gpuio-new selftest --backend cuda > $R/selftest.log 2>&1
echo "== selftest new rc=$? $(( $(date +%s)-t0 )) s; $(grep -c '^ok' $R/selftest.log) ok, $(grep -c '^FAIL' $R/selftest.log) failed" >> $R/summary.txt
grep "^FAIL\|async\|full_device" $R/selftest.log | cut -c1-300 >> $R/summary.txt
pack
q() { # name, binary, env...
  local n=$1; local b=$2; shift 2; local t0=$(date +%s)
  env GPUIO_BENCH_QUEUE_SIZES=64 "$@" timeout 60 $S/gpuio-$b bench --only queues --backend cuda --repeats 1 > $R/q-$n.log 2>&1
  echo "== q $n ($b $*) rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
  grep -E "M msg/s;|copy-back: kernel|queue to host, 64 B messages" $R/q-$n.log >> $R/summary.txt
}
q new1 new
q old1 head
q new2 new
q old2 head
q new3 new
pack
t0=$(date +%s)
timeout 300 $S/gpuio-new bench --repeats 3 > $R/bench.log 2>&1
echo "== bench rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
pack
cat $R/summary.txt
