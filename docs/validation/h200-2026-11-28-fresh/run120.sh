#!/bin/bash
# Session 2026-11-28e, call 3: bulk with the files emptied before the staged write pass (fresh files, as the references).
S=./bin/m22
mkdir -p /tmp/gc; export XDG_CACHE_HOME=/tmp/gc
R=$OUT/r; mkdir -p $R
pack() { (cd $OUT && tar czf r.tgz r); }
t0=$(date +%s)
timeout 240 $S/gpuio bench --only bulk --backend cuda --repeats 1 > $R/bulk-all.log 2>&1
echo "== bulk all rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
pack
timeout 90 $S/gpuio bench --only bulk --backend cuda/forward --repeats 1 > $R/bulk-fwd2.log 2>&1
echo "== bulk fwd2 rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
pack; cat $R/summary.txt
