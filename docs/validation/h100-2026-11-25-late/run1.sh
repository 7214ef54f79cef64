#!/bin/bash
# Validation of main: selftest on every CUDA pair, then the full bench (one repeat).
B=./.gpucheck/m/gpuio
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv > $R/machine.txt 2>&1
uname -r >> $R/machine.txt; nproc >> $R/machine.txt
t0=$(date +%s)
timeout 300 $B selftest > $R/selftest.txt 2> $R/selftest.err
echo "selftest rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
tail -5 $R/selftest.txt >> $R/summary.txt
grep -iE "fail" $R/selftest.txt | head -20 >> $R/summary.txt
t0=$(date +%s)
timeout 260 $B bench --repeats 1 > $R/bench.txt 2> $R/bench.err
echo "bench rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
cd $OUT && tar czf r.tgz r && cat r/summary.txt
