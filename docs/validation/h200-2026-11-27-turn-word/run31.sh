#!/bin/bash
# Session 2026-11-27b, call 1: polling techniques for a device<->host round trip, micro-costs.
R=$OUT/r; mkdir -p $R
nvcc -O3 -arch=sm_90 -o /tmp/pp run31-pp.cu -lpthread > $R/build.log 2>&1; echo build rc=$? >> $R/build.log
nvidia-smi --query-gpu=name,driver_version,clocks.sm,pcie.link.gen.current,pcie.link.width.current --format=csv > $R/gpu.txt
for k in 1 2 3; do timeout 60 /tmp/pp > $R/pp$k.txt 2>&1; done
cat $R/build.log $R/gpu.txt $R/pp*.txt
