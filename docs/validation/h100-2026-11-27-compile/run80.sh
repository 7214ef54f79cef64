#!/bin/bash
# run 80 (H100): the to-host queue's rate against its rings (16 drain threads), two passes, interleaved.
set -u
R=$OUT/r; mkdir -p $R /tmp/gc80
export XDG_CACHE_HOME=/tmp/gc80
B=.gpucheck/m79/gpuio-note
chmod +x $B
( time timeout 200 $B selftest --backend cuda ) > $R/selftest.log 2>&1; echo "selftest rc $?" >> $R/selftest.log
for pass in 1 2; do
  for rings in 16 32 64; do
    [ $SECONDS -gt 470 ] && break
    GPUIO_BENCH_QUEUE_RINGS=$rings GPUIO_BENCH_QUEUE_DRAINS=16 timeout 150 $B bench --backend cuda/forward --only queues --repeats 1 > $R/q-$rings-$pass.log 2>&1
    echo "rc $?" >> $R/q-$rings-$pass.log
  done
done
(cd /tmp/gc80 && tar czf $R/cache.tgz gpuio)
(cd $OUT && tar czf r.tgz r)
