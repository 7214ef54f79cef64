#!/bin/bash
# run 211: HEAD + describe (uncommitted): selftest, cuda_check main, gpuio run nops.cu at 132x256 and 132x1024 (the line naming the build).
R=$OUT/r; mkdir -p $R; export XDG_CACHE_HOME=/tmp/gc
S=.gpucheck/s17; B=$S/h2/gpuio
date -u > $R/uname.txt
t=$(date +%s); timeout 150 $B selftest --backend cuda > $R/selftest.log 2>&1; echo "selftest rc $? $(( $(date +%s)-t ))s"; tail -1 $R/selftest.log | cut -c1-200
for b in 256 1024; do
  timeout 60 $B run $S/p/nops.cu --backend cuda/forward --grid 132 --block $b --arg 16 --arg 0 --arg 0xffffffffffffffff --arg 0 > $R/nops-$b.out 2> $R/nops-$b.err; echo "nops $b rc $?"
  sed 's/\x1b\[[0-9;]*m//g' $R/nops-$b.err | grep -E "runs the|params" | cut -c1-200
done
(cd $OUT && tar czf r.tgz r)
t=$(date +%s); timeout 150 $S/h2/cuda_check main > $R/check.log 2>&1; echo "check rc $? $(( $(date +%s)-t ))s"; grep -E "FAIL|a launch runs" $R/check.log | cut -c1-400
date -u >> $R/uname.txt
(cd $OUT && tar czf r.tgz r)
