#!/bin/bash
# Session 2026-11-26 (late night), call 4: the turn's waiting path with loads (ptr2):
# selftest, then forward's request figures against a2164fd (main), interleaved.
S=./.gpucheck/m
mkdir -p /tmp/gc && cp -r .gpucheck/gc/gcache /tmp/gc/ 2>/dev/null
rm -f /tmp/gc/gcache/calibration.json /tmp/gc/gcache/gpuio/calibration.json
export XDG_CACHE_HOME=/tmp/gc/gcache
R=$OUT/r; mkdir -p $R
pack() { (cd $OUT && tar czf r.tgz r); }
t0=$(date +%s)
timeout 240 $S/gpuio-ptr2 selftest --backend cuda > $R/selftest.log 2>&1
echo "== selftest ptr2 cuda rc=$? $(( $(date +%s)-t0 )) s; $(grep -c '^ok' $R/selftest.log) ok, $(grep -c '^FAIL' $R/selftest.log) failed" >> $R/summary.txt
grep "^FAIL" $R/selftest.log | cut -c1-300 >> $R/summary.txt
pack
rq() { # name, binary
  local n=$1; local b=$2; local t0=$(date +%s)
  timeout 100 $S/gpuio-$b bench --only requests --backend cuda/forward --repeats 1 > $R/rq-$n.log 2>&1
  echo "== rq $n ($b) rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
  grep -E "NOPs, whole|NOP latency p50|one NOP|write\+read\+printf" $R/rq-$n.log | head -8 >> $R/summary.txt
}
rq ptr2a ptr2
pack
rq main1 main
rq ptr2b ptr2
rq main2 main
pack
cat $R/summary.txt
