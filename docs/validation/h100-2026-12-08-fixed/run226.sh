#!/bin/bash
# run 226: direct with positioned writes never marked IOSQE_ASYNC ("unmarked", so
# the kernel hashes a file's writes to one io-wq worker and the device's write gate
# is not used), then e2e8cef's direct ("fixed") if time is left.
set -u
export XDG_CACHE_HOME=/tmp/gc
R=$OUT/r; mkdir -p $R
T0=$(date +%s)
for b in unmarked fixed; do
  f=$R/bulk-direct-$b-$(date +%s).txt
  timeout 75 .gpucheck/s27/$b/gpuio bench --backend cuda/direct --only bulk --repeats 1 > $f 2>&1
  echo "$b rc $? t=$(( $(date +%s) - T0 ))"
  sed 's/\x1b\[[0-9;]*m//g' $f | grep -E "^  direct: 1 MiB pwrite|^      host CPU|pwrite 1 MiB, one file  " | cut -c1-200 | head -12
done
