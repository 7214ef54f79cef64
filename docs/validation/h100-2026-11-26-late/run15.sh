#!/bin/bash
# Session 2026-11-26 (late), call 2: sendprobe.cu — reservation vs write pattern.
R=$OUT/r; mkdir -p $R
cd .gpucheck/k && timeout 120 nvcc -O3 -arch=sm_90 -o /tmp/sendprobe sendprobe.cu > $R/nvcc.log 2>&1; echo "nvcc rc=$?" >> $R/summary.txt
timeout 120 /tmp/sendprobe > $R/sendprobe.log 2>&1; echo "sendprobe rc=$?" >> $R/summary.txt
cat $R/nvcc.log $R/sendprobe.log >> $R/summary.txt
cat $R/summary.txt
