#!/bin/bash
# run 57 (H100): host queues at HEAD (528cade) with the senders' diagnostics; whole-device NOPs head vs main again.
set -u
R=$OUT/r; mkdir -p $R /tmp/gc/gcache
[ -d .gpucheck/gc/gcache ] && cp -r .gpucheck/gc/gcache/. /tmp/gc/gcache/
export XDG_CACHE_HOME=/tmp/gc/gcache
B=.gpucheck/m57
chmod +x $B/*
nvidia-smi --query-gpu=name,driver_version --format=csv > $R/smi.txt 2>&1
stamp() { while IFS= read -r l; do echo "$(date +%T.%N | cut -c1-12) $l"; done; }
timeout 330 $B/gpuio-head bench --only queues --repeats 3 2>&1 | stamp > $R/queues-head.log
for i in 1 2; do
  GPUIO_BENCH_QUEUE_SIZES=64 timeout 60 $B/gpuio-head bench --only queues --repeats 1 2>&1 | stamp > $R/q64-$i.log
done
for b in head main; do
  timeout 70 $B/gpuio-$b bench --only requests --backend cuda/forward --repeats 1 2>&1 | stamp > $R/req-$b.log
done
(cd $OUT && tar czf r.tgz r)
tar czf $OUT/gcache.tgz -C /tmp/gc gcache
