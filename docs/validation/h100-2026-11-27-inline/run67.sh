#!/bin/bash
# run 67 (H100): the whole bench at a8744d1 (main's HEAD of this stop).
set -u
R=$OUT/r; mkdir -p $R /tmp/gc/gcache
[ -d .gpucheck/gc/gcache ] && cp -r .gpucheck/gc/gcache/. /tmp/gc/gcache/
export XDG_CACHE_HOME=/tmp/gc/gcache
B=.gpucheck/m67
chmod +x $B/*
finish() { (cd $OUT && tar czf r.tgz r); }
T0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version --format=csv > $R/gpu.txt 2>&1; uname -r >> $R/gpu.txt
timeout 480 $B/gpuio-head bench --repeats 3 --plot $R/bench.svg > $R/bench.log 2> $R/bench.err
echo "== bench rc=$? $(( $(date +%s)-T0 )) s" >> $R/bench.log
finish
