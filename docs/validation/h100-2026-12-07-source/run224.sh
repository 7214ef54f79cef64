#!/bin/bash
# run 224 (prepared 2026-12-07 20:48 session, run 23:31 UTC): one file's writes from a
# warmer source. (1) writeprobe.cu over a file's existing pages and into an emptied
# file; (2) forward's bulk passes (branch touch-exp): the forwarder reading each long
# write's staging before submitting it (GPUIO_EXP_TOUCH=1) against without, at 64
# slots (at most 64 MiB queued ahead of a write, which a 300 MiB L3 keeps) and at the
# bulk channel's 1024 (1 GiB, which it cannot); and at 1024 slots a file's long writes
# gated on the device before the warp's copy, 4 or 8 in flight (gate4, gate8), the
# second also with the touch.
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
# binary:slots:touch
for spec in touch:64:off touch:64:on touch:64:off touch:64:on touch:1024:off touch:1024:on gate4:1024:off gate8:1024:off gate8:1024:on touch:1024:off; do
  b=${spec%%:*}; rest=${spec#*:}; s=${rest%:*}; t=${rest#*:}
  if [ $t = on ]; then export GPUIO_EXP_TOUCH=1; else unset GPUIO_EXP_TOUCH; fi
  f=$R/bulk-$b-$s-$t-$(date +%s).txt
  GPUIO_BENCH_BULK_SLOTS=$s timeout 80 .gpucheck/s26/$b/gpuio bench --backend cuda/forward --only bulk --repeats 1 > $f 2>&1
  echo "$b slots $s touch $t rc $? t=$(( $(date +%s) - T0 ))"
  sed 's/\x1b\[[0-9;]*m//g' $f | grep -E "^  forward: 1 MiB|^      host CPU|one host thread, pwrite 1 MiB, one file  " | cut -c1-150 | head -9
  (cd $OUT && tar czf r.tgz r)
done
