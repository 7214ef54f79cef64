#!/bin/bash
mkdir -p $OUT/r; cd .gpucheck/p1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv > $OUT/r/gpu.txt 2>&1
nvcc -O2 -arch=sm_90 -std=c++17 -o pollprobe pollprobe.cu > $OUT/r/build.txt 2>&1 || { cat $OUT/r/build.txt; exit 1; }
timeout 120 ./pollprobe > $OUT/r/poll.txt 2>&1; echo "rc $?" >> $OUT/r/poll.txt
cat $OUT/r/poll.txt
cd ../..
export XDG_CACHE_HOME=/tmp/gc
timeout 150 ./.gpucheck/m1/gpuio bench --only latency > $OUT/r/lat-head.log 2>&1; echo "rc $?" >> $OUT/r/lat-head.log
grep -E "NOP latency p50|one NOP" $OUT/r/lat-head.log
(cd $OUT && tar czf r.tgz r)
