#!/bin/bash
# Session 2026-11-26 evening, call 7: pread(2) from the page cache into malloc'd,
# registered (gpuio's staging) and cudaHostAlloc'd memory, by host threads; and into
# registered memory while the GPU reads it (stagingread.cu, nvcc).
R=$OUT/r; mkdir -p $R
pack() { (cd $OUT && tar czf r.tgz r); }
t0=$(date +%s)
nvcc -O3 -arch=sm_90 -o /tmp/stagingread .gpucheck/k/stagingread.cu > $R/stagingread.log 2>&1 && timeout 200 /tmp/stagingread >> $R/stagingread.log 2>&1
echo "== stagingread rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt; cat $R/stagingread.log >> $R/summary.txt
lscpu | grep -E "Model name|NUMA|Socket|Thread|Core" >> $R/summary.txt
pack
cat $R/summary.txt
