#!/bin/bash
# run 88 (H100), 2026-11-28: main (76986f2) vs credits (b6408dd), queue figures 64 B and 256 B only, 3 repeats a run, interleaved.
set -u
R=$OUT/r; mkdir -p $R /tmp/gcc /tmp/gcm
B=.gpucheck/m88
chmod +x $B/*
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > $R/gpu.txt 2>&1
for pass in 1 2 3; do
  for b in main credits; do
    [ $SECONDS -gt 470 ] && break
    c=/tmp/gcm; [ $b = credits ] && c=/tmp/gcc
    s=$SECONDS
    GPUIO_BENCH_QUEUE_SIZES=64,256 XDG_CACHE_HOME=$c timeout 120 $B/gpuio-$b bench --backend cuda/forward --only queues --repeats 3 > $R/q-$b-$pass.log 2>&1
    echo "rc $? secs $((SECONDS-s))" >> $R/q-$b-$pass.log
  done
done
(cd $OUT && tar czf r.tgz r)
