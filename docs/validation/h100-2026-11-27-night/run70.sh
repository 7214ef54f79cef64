#!/bin/bash
# run 70 (H100): probe of one thread's loads, timer reads and atomics after an acquiring poll.
set -u
R=$OUT/r; mkdir -p $R
cd .gpucheck/p70 && nvcc -O2 -arch=sm_90 -o lat lat.cu > $R/build.log 2>&1; echo "build rc $?" >> $R/build.log
cuobjdump -sass lat | grep -E "LDG|ATOM|RED|MEMBAR|FENCE|CCTL|S2UR|CS2R" | sort | uniq -c | sort -rn | head -40 > $R/sass.txt 2>&1
timeout 120 ./lat > $R/lat.log 2>&1; echo "rc $?" >> $R/lat.log
nvidia-smi -q | grep -E "Product Name|Driver Version|CUDA Version" > $R/smi.txt
(cd $OUT && tar czf r.tgz r)
