#!/bin/bash
# run 219: main + the device's copy alone in the bulk passes: forward's bulk passes with
# 1024 (default), 2048 and 256 slots; then the whole bench
set -u
export XDG_CACHE_HOME=/tmp/gc
R=$OUT/r; mkdir -p $R
D=.gpucheck/s22
T0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/gpu.txt 2>&1
uname -r >> $R/gpu.txt; nproc >> $R/gpu.txt; df -T /tmp . >> $R/gpu.txt 2>&1; cat $R/gpu.txt
for slots in 1024 2048 256; do
  GPUIO_BENCH_BULK_SLOTS=$slots timeout 150 $D/cur/gpuio bench --backend cuda/forward --only bulk --repeats 1 > $R/bulk-$slots.txt 2>&1
  echo "bulk $slots rc $? t=$(( $(date +%s) - T0 ))"
  sed 's/\x1b\[[0-9;]*m//g' $R/bulk-$slots.txt | grep -E "^  forward: 1 MiB|copy alone|host CPU|units x" | grep -v "per SM group" | cut -c1-200 | head -14
  (cd $OUT && tar czf r.tgz r)
done
timeout 420 $D/cur/gpuio bench > $R/bench.txt 2>&1
echo "bench rc $? t=$(( $(date +%s) - T0 ))"
sed 's/\x1b\[[0-9;]*m//g' $R/bench.txt | grep -vE "^      (also|host CPU)" | grep -E "^  " | cut -c1-170 | head -90
(cd $OUT && tar czf r.tgz r)
