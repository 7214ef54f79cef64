#!/bin/bash
# run 214: forward's watch of the next entry, interleaved with the base (d2e80a8)
set -u
export XDG_CACHE_HOME=/tmp/gc
R=$OUT/r; mkdir -p $R
D=.gpucheck/s19
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/gpu.txt 2>&1
uname -r >> $R/gpu.txt; nproc >> $R/gpu.txt; lscpu | grep -i "model name" >> $R/gpu.txt
cat $R/gpu.txt
# warm the NVRTC cache once
timeout 120 $D/new/gpuio bench --backend cuda/forward --only latency --repeats 1 > $R/warm.txt 2>&1
echo "warm rc $?"
T0=$(date +%s)
for rep in 1 2 3; do
  for v in base new0 new2 new5; do
    case $v in
      base) B=$D/base/gpuio; W=;;
      new0) B=$D/new/gpuio; W=0;;
      new2) B=$D/new/gpuio; W=2000;;
      new5) B=$D/new/gpuio; W=5000;;
    esac
    GPUIO_FORWARD_WATCH_NS=$W GPUIO_LOG=gpuio_core::forward::forwarder=debug timeout 90 $B bench --backend cuda/forward --only latency --repeats 3 > $R/lat-$v-$rep.txt 2>&1
    echo "$v $rep rc $? t=$(( $(date +%s) - T0 ))"
    sed 's/\x1b\[[0-9;]*m//g' $R/lat-$v-$rep.txt | grep -E "median of each step|NOP latency p50|pwrite latency p50|forwarder stopped.*taken=[1-9]" | sed 's/^/  /' | cut -c1-300
  done
  (cd $OUT && tar czf r.tgz r)
done
for v in base new2; do
  case $v in base) B=$D/base/gpuio; W=;; new2) B=$D/new/gpuio; W=2000;; esac
  GPUIO_FORWARD_WATCH_NS=$W timeout 200 $B bench --backend cuda/forward --only requests --repeats 1 > $R/req-$v.txt 2>&1
  echo "req $v rc $? t=$(( $(date +%s) - T0 ))"
  sed 's/\x1b\[[0-9;]*m//g' $R/req-$v.txt | grep -E "NOPs|64 B|4 KiB" | head -12 | cut -c1-200
  (cd $OUT && tar czf r.tgz r)
done
