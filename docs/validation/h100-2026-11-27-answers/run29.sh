#!/bin/bash
# Session 2026-11-27, call 5: the turn's lap by shift, the slot's transport (fin2)
# against e7f1d1a (fin): selftest; one thread's round trips, interleaved; forward's
# request figures, interleaved.
S=./.gpucheck/m
mkdir -p /tmp/gc && cp -r .gpucheck/gc/gcache /tmp/gc/ 2>/dev/null
rm -f /tmp/gc/gcache/calibration.json /tmp/gc/gcache/gpuio/calibration.json
export XDG_CACHE_HOME=/tmp/gc/gcache
R=$OUT/r; mkdir -p $R
pack() { (cd $OUT && tar czf r.tgz r); }
t0=$(date +%s)
timeout 300 $S/gpuio-fin2 selftest --backend cuda > $R/selftest.log 2>&1
echo "== selftest fin2 cuda rc=$? $(( $(date +%s)-t0 )) s; $(grep -c '^ok' $R/selftest.log) ok, $(grep -c '^FAIL' $R/selftest.log) failed" >> $R/summary.txt
grep "^FAIL" $R/selftest.log | cut -c1-300 >> $R/summary.txt
pack
lat() { # name, binary
  local t0=$(date +%s)
  timeout 60 $S/gpuio-$2 bench --only latency --backend cuda > $R/lat-$1.log 2>&1
  echo "== lat $1 rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
  grep -E "NOP latency p50|one NOP" $R/lat-$1.log >> $R/summary.txt
}
lat fin2a fin2; lat fin1a fin; lat fin2b fin2; lat fin1b fin
pack
rq() { # name, binary
  local t0=$(date +%s)
  timeout 110 $S/gpuio-$2 bench --only requests --backend cuda/forward --repeats 3 > $R/rq-$1.log 2>&1
  echo "== rq $1 rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
  grep -E "NOPs, whole|NOP latency p50|write\+read\+printf|1 MiB p(read|write), whole device, one file  " $R/rq-$1.log | head -8 >> $R/summary.txt
}
rq fin1 fin
pack
rq fin2 fin2
pack
cat $R/summary.txt
