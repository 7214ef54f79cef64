#!/bin/bash
# Session 2026-11-27c, call 2: 4 KiB messages to the host, the kernel's side alone.
R=$OUT/r; mkdir -p $R
nvcc -O3 -arch=sm_90 -o /tmp/big .gpucheck/probe/big.cu > $R/build.log 2>&1; echo build rc=$? >> $R/build.log
cat $R/build.log
timeout 200 /tmp/big > $R/big.txt 2>&1; echo "rc=$?" >> $R/big.txt
timeout 200 /tmp/big > $R/big2.txt 2>&1; echo "rc=$?" >> $R/big2.txt
cat $R/big.txt $R/big2.txt
