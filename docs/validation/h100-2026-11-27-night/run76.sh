#!/bin/bash
# run 76 (H100): whole-device NOPs of 1f98185 (new) against 89f4ad0 (old), interleaved,
# and each build's registers per kernel (cuobjdump -res-usage of the cached cubins).
set -u
R=$OUT/r; mkdir -p $R /tmp/gc/gcache
cp -r .gpucheck/gc/gcache/. /tmp/gc/gcache/
cp -r .gpucheck/gc75/gcache/. /tmp/gc/gcache/
export XDG_CACHE_HOME=/tmp/gc/gcache
B=.gpucheck/m76
chmod +x $B/*
finish() { (cd $OUT && tar czf r.tgz r); }
for f in /tmp/gc/gcache/gpuio/*.cubin; do echo "== $f"; cuobjdump -res-usage $f 2>&1 | grep -A1 -E "gpuio_k_(nop|latency|nop_anatomy|small_ops|full_device)\b" ; done > $R/res-usage.txt 2>&1
finish
for i in 1 2; do
  for b in old new; do
    timeout 70 $B/gpuio-$b bench --only requests --backend cuda/forward --repeats 1 > $R/req-forward-$b-$i.log 2>&1
    finish
  done
done
