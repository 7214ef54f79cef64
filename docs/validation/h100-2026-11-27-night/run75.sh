#!/bin/bash
# run 75 (H100): the whole bench at 1f98185 (ABI 12, kernels in eight programs).
set -u
R=$OUT/r; mkdir -p $R /tmp/gc/gcache
[ -d .gpucheck/gc75/gcache ] && cp -r .gpucheck/gc75/gcache/. /tmp/gc/gcache/
export XDG_CACHE_HOME=/tmp/gc/gcache
B=.gpucheck/m75
chmod +x $B/*
finish() { (cd $OUT && tar czf r.tgz r); }
T0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version --format=csv > $R/gpu.txt 2>&1; uname -r >> $R/gpu.txt
timeout 560 $B/gpuio-head bench --repeats 3 --plot $R/bench.svg > $R/bench.log 2> $R/bench.err
echo "== bench rc=$? $(( $(date +%s)-T0 )) s" >> $R/bench.log
finish
