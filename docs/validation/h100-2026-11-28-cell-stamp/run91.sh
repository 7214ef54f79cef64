#!/bin/bash
# run 91 (H100): main (76986f2) vs cell8 (20f8570), queue figures at 4 KiB only, 3 repeats a run, interleaved, 2 passes.
set -u
R=$OUT/r; mkdir -p $R /tmp/gcc /tmp/gcm
B=.gpucheck/m91
chmod +x $B/*
for pass in 1 2; do
  for b in main cell8; do
    [ $SECONDS -gt 230 ] && break
    c=/tmp/gcm; [ $b = cell8 ] && c=/tmp/gcc
    s=$SECONDS
    GPUIO_BENCH_QUEUE_SIZES=4096 XDG_CACHE_HOME=$c timeout 80 $B/gpuio-$b bench --backend cuda/forward --only queues --repeats 3 > $R/q-$b-$pass.log 2>&1
    echo "rc $? secs $((SECONDS-s))" >> $R/q-$b-$pass.log
  done
done
(cd $OUT && tar czf r.tgz r)
