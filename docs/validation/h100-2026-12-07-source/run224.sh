#!/bin/bash
# run 224 (prepared 2026-12-07, not run: no device time left): one file's writes from a
# source the forwarder warmed just before submitting it. (1) writeprobe.cu over a file's
# existing pages and into an emptied file; (2) forward's bulk passes with the forwarder
# reading each long write's staging before submitting it (GPUIO_EXP_TOUCH=1, branch
# touch-exp) against without, at 64 slots (at most 64 MiB queued ahead of a write, which
# a 300 MiB L3 keeps) and at the bulk channel's default 1024 (1 GiB, which it cannot).
set -u
export XDG_CACHE_HOME=/tmp/gc
R=$OUT/r; mkdir -p $R
T0=$(date +%s)
( nvidia-smi --query-gpu=name,driver_version --format=csv; uname -r; lscpu | grep -E "Model name|Thread|L3" ) > $R/machine.txt 2>&1
nvcc -O3 -std=c++17 -arch=sm_90a -o /tmp/writeprobe .gpucheck/s26/writeprobe.cu > $R/nvcc.txt 2>&1 || cat $R/nvcc.txt
for m in existing fresh; do
  timeout 120 /tmp/writeprobe /tmp/writeprobe.bin $m > $R/writeprobe-$m.txt 2>&1; echo "probe $m rc $? t=$(( $(date +%s) - T0 ))"; tail -7 $R/writeprobe-$m.txt
done
(cd $OUT && tar czf r.tgz r)
for spec in 64:off 64:on 64:off 64:on 1024:off 1024:on; do
  s=${spec%:*}; t=${spec#*:}
  if [ $t = on ]; then export GPUIO_EXP_TOUCH=1; else unset GPUIO_EXP_TOUCH; fi
  f=$R/bulk-$s-$t-$(date +%s).txt
  GPUIO_BENCH_BULK_SLOTS=$s timeout 80 .gpucheck/s26/touch/gpuio bench --backend cuda/forward --only bulk --repeats 1 > $f 2>&1
  echo "slots $s touch $t rc $? t=$(( $(date +%s) - T0 ))"
  sed 's/\x1b\[[0-9;]*m//g' $f | grep -E "^  forward: 1 MiB|^      host CPU|one host thread, pwrite 1 MiB, one file  " | cut -c1-150 | head -9
  (cd $OUT && tar czf r.tgz r)
done
