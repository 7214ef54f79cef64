#!/bin/bash
# Session 2026-11-26 (night), call 4: sendprobe2.cu - the ring line's bookkeeping.
R=$OUT/r; mkdir -p $R
cp .gpucheck/k/sendprobe2.cu $R/
t0=$(date +%s)
nvcc -O3 -arch=sm_90 -o /tmp/sp2 .gpucheck/k/sendprobe2.cu > $R/build.log 2>&1
echo "== build rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
timeout 120 /tmp/sp2 > $R/sendprobe2.log 2>&1
echo "== run rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
(cd $OUT && tar czf r.tgz r)
cat $R/summary.txt $R/build.log $R/sendprobe2.log
