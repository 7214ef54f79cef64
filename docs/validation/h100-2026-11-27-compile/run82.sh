#!/bin/bash
# run 82 (H100): the whole-warp fill (gpuio_impl_queue_fill_warp) against main: selftest, queue figures interleaved, resource usage.
set -u
R=$OUT/r; mkdir -p $R /tmp/gcold /tmp/gcnew
cp -r .gpucheck/gc80/gpuio /tmp/gcold/
B=.gpucheck/m82
chmod +x $B/*
( time XDG_CACHE_HOME=/tmp/gcnew timeout 250 $B/gpuio-fill selftest --backend cuda ) > $R/selftest-fill.log 2>&1; echo "selftest rc $?" >> $R/selftest-fill.log
export GPUIO_BENCH_QUEUE_SIZES=64,256
for pass in 1 2; do
  for b in main fill; do
    [ $SECONDS -gt 480 ] && break
    c=/tmp/gcold; [ $b = fill ] && c=/tmp/gcnew
    XDG_CACHE_HOME=$c timeout 100 $B/gpuio-$b bench --backend cuda/forward --only queues --repeats 1 > $R/q-$b-$pass.log 2>&1
    echo "rc $?" >> $R/q-$b-$pass.log
  done
done
if [ $SECONDS -lt 480 ]; then
  GPUIO_BENCH_QUEUE_RINGS=64 GPUIO_BENCH_QUEUE_DRAINS=16 XDG_CACHE_HOME=/tmp/gcnew timeout 100 $B/gpuio-fill bench --backend cuda/forward --only queues --repeats 1 > $R/q-fill-64rings.log 2>&1
fi
for f in /tmp/gcnew/gpuio/*.cubin; do cuobjdump --dump-resource-usage $f 2>&1 | grep -A1 -E "queue_send|queue_fill\b|k_printf" ; done > $R/res-new.txt
for f in /tmp/gcold/gpuio/*.cubin; do cuobjdump --dump-resource-usage $f 2>&1 | grep -A1 -E "queue_send|queue_fill\b|k_printf" ; done > $R/res-old.txt
(cd /tmp/gcnew && tar czf $R/cache.tgz gpuio)
(cd $OUT && tar czf r.tgz r)
