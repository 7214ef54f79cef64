#!/bin/bash
# Session 2026-11-28c, call 4: the whole bench at eae7c1a (the write gate's bypass of a524d72).
S=./.gpucheck/m4
mkdir -p /tmp/gc; export XDG_CACHE_HOME=/tmp/gc
R=$OUT/r; mkdir -p $R
pack() { (cd $OUT && tar czf r.tgz r); }
nvidia-smi --query-gpu=name,driver_version,pcie.link.gen.current,pcie.link.width.current --format=csv > $R/gpu.txt
uname -r >> $R/gpu.txt
t0=$(date +%s)
timeout 450 $S/gpuio bench --repeats 3 --plot $R/bench.svg --json > $R/bench.json 2> $R/bench.err
echo "== bench rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
pack
cat $R/summary.txt
