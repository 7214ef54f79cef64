#!/bin/bash
# Session 2026-11-26 (late night), call 3: slots that know their turn and shared
# record (ptr) against the turn's fast path alone (new) and a2164fd (main); the
# selftest and the whole bench on ptr.
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
  grep -E "one NOP|NOP latency p50" $R/lat-$n.log | head -30 >> $R/summary.txt
}
lat ptr1 ptr
pack
lat main1 main
lat new1 new
lat ptr2 ptr
lat main2 main
lat new2 new
lat ptr3 ptr
pack
t0=$(date +%s)
timeout 120 $S/gpuio-ptr selftest --backend cuda > $R/selftest.log 2>&1
echo "== selftest ptr cuda rc=$? $(( $(date +%s)-t0 )) s; $(grep -c '^ok' $R/selftest.log) ok, $(grep -c '^FAIL' $R/selftest.log) failed" >> $R/summary.txt
grep "^FAIL" $R/selftest.log | cut -c1-300 >> $R/summary.txt
pack
t0=$(date +%s)
timeout 330 $S/gpuio-ptr bench --backend cuda --repeats 3 --json > $R/bench.json 2> $R/bench.log
echo "== bench ptr rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
(cd /tmp/gc && tar czf $OUT/gcache.tgz gcache)
pack
cat $R/summary.txt
grep -vE "^gpuio bench: " $R/bench.log | tail -80
