#!/bin/bash
# ae6633e: bench --quick --json (cold), then --only requests on every cuda pair.
S=./.gpucheck/s5/n
mkdir -p /tmp/gc; export XDG_CACHE_HOME=/tmp/gc
R=$OUT/r; mkdir -p $R
t0=$(date +%s)
timeout 200 $S/gpuio bench --quick --json > $R/quick.json 2> $R/quick.err
echo "== quick rc=$? $(( $(date +%s)-t0 )) s" | tee -a $R/summary.txt
t0=$(date +%s)
timeout 300 $S/gpuio bench --only requests --repeats 1 > $R/req.log 2>&1
echo "== requests rc=$? $(( $(date +%s)-t0 )) s" | tee -a $R/summary.txt
(cd $OUT && tar czf r.tgz r)
grep -E "NOPs, whole|SQPOLL" $R/req.log | cut -c1-200
