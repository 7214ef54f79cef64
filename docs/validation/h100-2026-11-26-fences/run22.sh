#!/bin/bash
# Session 2026-11-26 (late night), call 2: the turn's fast path (one fence, relaxed
# turn, CAS first) and the queue kernel's records of one size, against a2164fd.
S=./.gpucheck/m
mkdir -p /tmp/gc && cp -r .gpucheck/gc/gcache /tmp/gc/ 2>/dev/null
rm -f /tmp/gc/gcache/calibration.json /tmp/gc/gcache/gpuio/calibration.json
export XDG_CACHE_HOME=/tmp/gc/gcache
R=$OUT/r; mkdir -p $R
pack() { (cd $OUT && tar czf r.tgz r); }
lat() { # name, binary
  local n=$1; local b=$2; local t0=$(date +%s)
  timeout 240 $S/gpuio-$b bench --only latency --backend cuda --repeats 1 > $R/lat-$n.log 2>&1
  echo "== lat $n ($b) rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
  grep -E "NOP|floor|ping" $R/lat-$n.log | head -30 >> $R/summary.txt
}
q() { # name, binary, env...
  local n=$1; local b=$2; shift 2; local t0=$(date +%s)
  env GPUIO_BENCH_QUEUE_SIZES=64 "$@" timeout 240 $S/gpuio-$b bench --only queues --backend cuda --repeats 1 > $R/q-$n.log 2>&1
  echo "== q $n ($b $*) rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
  grep -E "queue to host, .* messages|M msg/s; kernel|copy-back: kernel" $R/q-$n.log | head -6 >> $R/summary.txt
}
lat old1 main
lat new1 new
pack
lat old2 main
lat new2 new
pack
q new-4096a new
q new-65536a new GPUIO_BENCH_QUEUE_CAPACITY=65536
q old-4096 main
q new-4096b new
q new-65536b new GPUIO_BENCH_QUEUE_CAPACITY=65536
q new-16384 new GPUIO_BENCH_QUEUE_CAPACITY=16384
pack
t0=$(date +%s)
timeout 240 $S/gpuio-new selftest --backend cuda > $R/selftest.log 2>&1
echo "== selftest new cuda rc=$? $(( $(date +%s)-t0 )) s; $(grep -c '^ok' $R/selftest.log) ok, $(grep -c '^FAIL' $R/selftest.log) failed" >> $R/summary.txt
grep "^FAIL" $R/selftest.log | cut -c1-300 >> $R/summary.txt
(cd /tmp/gc && tar czf $OUT/gcache.tgz gcache)
pack
cat $R/summary.txt
