#!/bin/bash
R=$OUT/r; mkdir -p $R; export XDG_CACHE_HOME=/tmp/gc
S=.gpucheck/s10; B=$S/h/gpuio
nvcc -O3 -arch=sm_90 -std=c++17 -o /tmp/pp $S/p/pp.cu > $R/nvcc.log 2>&1; echo "nvcc rc $?"; cat $R/nvcc.log | head -20
timeout 200 /tmp/pp > $R/pp.log 2>&1; echo "pp rc $?"; cat $R/pp.log
timeout 60 $B bench --backend cuda/forward --only latency --repeats 3 > $R/lat.json 2> $R/lat.err; echo "lat rc $?"
grep -E "one NOP|latency p50" $R/lat.err | cut -c1-200
timeout 100 /tmp/pp > $R/pp2.log 2>&1 ; echo "pp2 rc $?"; grep -E "page 0" $R/pp2.log
(cd $OUT && tar czf r.tgz r)
