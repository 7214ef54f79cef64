#!/bin/bash
# Session 2026-11-27b, call 5: turn4 (turn3 with the turn handed on after the holder's
# fields, by a relaxed add) - the header to land: latency, selftest, whole-device requests.
S=./.gpucheck/m
T0=$(date +%s)
mkdir -p /tmp/gc/gcache
export XDG_CACHE_HOME=/tmp/gc/gcache
R=$OUT/r; mkdir -p $R
pack() { (cd $OUT && tar czf r.tgz r); }
nvidia-smi --query-gpu=name,driver_version,pcie.link.gen.current,pcie.link.width.current --format=csv > $R/gpu.txt
timeout 240 $S/gpuio-turn4 bench --only latency --backend cuda > $R/lat-turn4.log 2>&1
echo "== lat turn4 (cold compile) rc=$? $(( $(date +%s)-T0 )) s" >> $R/summary.txt
grep -E "latency p50|one NOP" $R/lat-turn4.log >> $R/summary.txt
pack
t0=$(date +%s)
timeout 80 $S/gpuio-turn4 selftest --backend cuda > $R/selftest-turn4.log 2>&1
echo "== selftest turn4 rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
tail -1 $R/selftest-turn4.log >> $R/summary.txt
grep -E "^FAIL|^fail" $R/selftest-turn4.log | head >> $R/summary.txt
pack
left=$(( T0 + 300 - $(date +%s) ))
if [ $left -gt 20 ]; then
  timeout $left $S/gpuio-turn4 bench --only requests --backend cuda/forward --repeats 3 > $R/rq-turn4.log 2>&1
  echo "== rq turn4 rc=$? (limit $left s)" >> $R/summary.txt
  grep -E "NOPs, whole|B pwrite, whole|B pread, whole" $R/rq-turn4.log >> $R/summary.txt
fi
pack
cat $R/summary.txt
