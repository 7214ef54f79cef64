#!/bin/bash
# run 56: forward NOP answered by the forwarder (gpuio-nop) vs main, interleaved; H100.
set -u
R=$OUT/r; mkdir -p $R /tmp/gc/gcache
[ -d .gpucheck/gc/gcache ] && cp -r .gpucheck/gc/gcache/. /tmp/gc/gcache/
export XDG_CACHE_HOME=/tmp/gc/gcache
B=.gpucheck/m56
chmod +x $B/*
nvidia-smi --query-gpu=name,driver_version,pcie.link.gen.current,pcie.link.width.current --format=csv > $R/smi.txt 2>&1
stamp() { while IFS= read -r l; do echo "$(date +%T.%N | cut -c1-12) $l"; done; }
date -u > $R/start.txt
timeout 400 $B/gpuio-main bench --only latency --repeats 1 > $R/lat-main-0.log 2>&1
for i in 1 2 3; do
  for b in nop main; do
    timeout 60 $B/gpuio-$b bench --only latency --repeats 1 > $R/lat-$b-$i.log 2>&1
  done
done
for b in nop main; do
  timeout 70 $B/gpuio-$b bench --only requests --backend cuda/forward --repeats 1 2>&1 | stamp > $R/req-$b.log
done
date -u > $R/end.txt
(cd $OUT && tar czf r.tgz r)
tar czf $OUT/gcache.tgz -C /tmp/gc gcache
