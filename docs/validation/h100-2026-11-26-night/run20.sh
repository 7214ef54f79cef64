#!/bin/bash
# Session 2026-11-26 (night), call 5: gpuio_queue_ring's tail in a line of its own
# (ABI 9) against 5458515 in one call, then selftest of the queue cases.
S=./.gpucheck/m
mkdir -p /tmp/gc && cp -r .gpucheck/gc/gcache /tmp/gc/ 2>/dev/null
rm -f /tmp/gc/gcache/calibration.json
export XDG_CACHE_HOME=/tmp/gc/gcache
R=$OUT/r; mkdir -p $R
pack() { (cd $OUT && tar czf r.tgz r); }
q() { # name, binary, env...
  local n=$1; local b=$2; shift 2; local t0=$(date +%s)
  env GPUIO_BENCH_QUEUE_SIZES=64,256,4096 "$@" timeout 170 $S/gpuio-$b bench --only queues --backend cuda --repeats 1 > $R/q-$n.log 2>&1
  echo "== q $n ($b $*) rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
  grep -E "queue to host, .* messages|M msg/s; kernel" $R/q-$n.log >> $R/summary.txt
}
q line1 line
pack
q head1 head
q line2 line
q head2 head
pack
t0=$(date +%s)
timeout 60 $S/gpuio-line selftest --backend cuda/forward > $R/selftest.log 2>&1
echo "== selftest line forward rc=$? $(( $(date +%s)-t0 )) s; $(grep -c '^ok' $R/selftest.log) ok, $(grep -c '^FAIL' $R/selftest.log) failed" >> $R/summary.txt
grep "^FAIL" $R/selftest.log | cut -c1-300 >> $R/summary.txt
pack
cat $R/summary.txt
