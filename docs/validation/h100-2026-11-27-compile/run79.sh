#!/bin/bash
# run 79 (H100): probe of SM writes to mapped host memory by store shape; the compile note.
set -u
R=$OUT/r; mkdir -p $R /tmp/gc79
cd .gpucheck/p79 && nvcc -O2 -arch=sm_90 -o wr wr.cu > $R/build.log 2>&1; echo "build rc $?" >> $R/build.log
timeout 120 ./wr > $R/wr.log 2>&1; echo "rc $?" >> $R/wr.log
cd ../..
export XDG_CACHE_HOME=/tmp/gc79
chmod +x .gpucheck/m79/*
timeout 40 .gpucheck/m79/gpuio-note selftest --backend cuda > $R/selftest.log 2>&1; echo "rc $?" >> $R/selftest.log
nvidia-smi -q | grep -E "Product Name|Driver Version|CUDA Version|Link Width|PCIe Generation" -A2 > $R/smi.txt
(cd $OUT && tar czf r.tgz r)
