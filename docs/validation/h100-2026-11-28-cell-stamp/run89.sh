#!/bin/bash
# run 89 (H100), 2026-11-28: main (76986f2, 16-byte cell header) vs cell8 (20f8570, one 8-byte stamp):
# cold selftest of cell8 on every CUDA pair, then queue figures 64 B and 256 B, 3 repeats a run, interleaved, 3 passes.
set -u
R=$OUT/r; mkdir -p $R /tmp/gcc /tmp/gcm
B=.gpucheck/m89
chmod +x $B/*
nvidia-smi --query-gpu=name,driver_version,pcie.link.gen.current,pcie.link.width.current --format=csv > $R/gpu.txt 2>&1
( time XDG_CACHE_HOME=/tmp/gcc timeout 150 $B/gpuio-cell8 selftest --backend cuda ) > $R/selftest-cell8.log 2>&1; echo "selftest rc $?" >> $R/selftest-cell8.log
for pass in 1 2 3; do
  for b in main cell8; do
    [ $SECONDS -gt 500 ] && break
    c=/tmp/gcm; [ $b = cell8 ] && c=/tmp/gcc
    s=$SECONDS
    GPUIO_BENCH_QUEUE_SIZES=64,256 XDG_CACHE_HOME=$c timeout 100 $B/gpuio-$b bench --backend cuda/forward --only queues --repeats 3 > $R/q-$b-$pass.log 2>&1
    echo "rc $? secs $((SECONDS-s))" >> $R/q-$b-$pass.log
  done
done
tail -3 $R/selftest-cell8.log > $R/selftest-tail.txt
(cd $OUT && tar czf r.tgz r)
