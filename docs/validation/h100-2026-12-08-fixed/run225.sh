#!/bin/bash
# run 225: e2e8cef's bench, direct's bulk passes twice (a shorter list than planned: the
# session's device time was short), with the CPU-driven io_uring reference on
# registered buffers (direct's SQEs).
set -u
export XDG_CACHE_HOME=/tmp/gc
R=$OUT/r; mkdir -p $R
T0=$(date +%s)
( nvidia-smi --query-gpu=name,driver_version --format=csv; uname -r; lscpu | grep -E "Model name|Thread|L3"; ulimit -l ) > $R/machine.txt 2>&1
for t in direct direct; do
  f=$R/bulk-$t-$(date +%s).txt
  timeout 100 .gpucheck/s27/fixed/gpuio bench --backend cuda/$t --only bulk --repeats 1 > $f 2>&1
  echo "$t rc $? t=$(( $(date +%s) - T0 ))"
  sed 's/\x1b\[[0-9;]*m//g' $f | grep -E "^  $t: 1 MiB pwrite|^      host CPU|pwrite 1 MiB, one file  |writes in flight.*one file  " | cut -c1-220 | head -12
  (cd $OUT && tar czf r.tgz r)
done
