#!/bin/bash
# Session 2026-11-28d, call 1: selftest of 6e8a3b7 (direct reaper guard of 9a546fc), then the wall
# time of `bench --quick --json`, each progress line stamped with seconds since its start.
S=./bin
mkdir -p /tmp/gc; export XDG_CACHE_HOME=/tmp/gc
R=$OUT/r; mkdir -p $R
pack() { (cd $OUT && tar czf r.tgz r); }
nvidia-smi > $R/smi.txt 2>&1; uname -r >> $R/smi.txt
t0=$(date +%s)
timeout 150 $S/gpuio selftest --backend cuda > $R/selftest.log 2>&1
echo "== selftest rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
tail -5 $R/selftest.log >> $R/summary.txt; pack
t0=$(date +%s.%N)
timeout 400 $S/gpuio bench --quick --json 2> >(while IFS= read -r l; do printf '%7.1f %s\n' "$(awk -v a=$(date +%s.%N) -v b=$t0 'BEGIN{print a-b}')" "$l"; done > $R/quick.err) > $R/quick.json
rc=$?
echo "== quick rc=$rc $(awk -v a=$(date +%s.%N) -v b=$t0 'BEGIN{print a-b}') s" >> $R/summary.txt
sleep 1; pack
cat $R/summary.txt
