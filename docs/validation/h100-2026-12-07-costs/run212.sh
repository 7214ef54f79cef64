#!/bin/bash
# run 212: single-thread costs of memory operations (probe costs.cu), cuda_check main at 9057805.
R=$OUT/r; mkdir -p $R; export XDG_CACHE_HOME=/tmp/gc
S=.gpucheck/s18
date -u > $R/uname.txt; nvidia-smi -q | grep -E "Product Name|Driver Version|CUDA Version|Max Clocks|SM  " | head > $R/gpu.txt
cd $S/p && timeout 120 nvcc -O3 -arch=sm_90 -o costs costs.cu > $R/nvcc.log 2>&1; echo "nvcc rc $?"; cd - >/dev/null
timeout 60 $S/p/costs > $R/costs.txt 2>&1; echo "costs rc $?"; cat $R/costs.txt | tail -40
cuobjdump -sass $S/p/costs > $R/costs.sass 2>/dev/null
(cd $OUT && tar czf r.tgz r)
# (the first of run 212's calls also ran cuda_check main, before the probe compiled:)
t=$(date +%s); timeout 150 $S/h/cuda_check main > $R/check.log 2>&1; echo "check rc $? $(( $(date +%s)-t ))s"
date -u >> $R/uname.txt
(cd $OUT && tar czf r.tgz r)
