#!/bin/bash
# Session 2026-11-28e, call 6: the waker that puts back a CQ tail seen going back (direct) — selftest on the GPU; direct latency and bulk.
S=./bin/m25
mkdir -p /tmp/gc; export XDG_CACHE_HOME=/tmp/gc
R=$OUT/r; mkdir -p $R
pack() { (cd $OUT && tar czf r.tgz r); }
t0=$(date +%s)
timeout 150 $S/gpuio selftest --backend cuda > $R/selftest.log 2>&1
echo "== selftest rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt; tail -2 $R/selftest.log >> $R/summary.txt
pack
timeout 60 $S/gpuio bench --only latency --backend cuda/direct --repeats 3 > $R/lat-direct.log 2>&1
echo "== lat rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
pack; cat $R/summary.txt
