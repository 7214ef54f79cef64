#!/bin/bash
# run 62 (H100): forward writes small runs of pwrites itself (gpuio-here) vs 20c7b8d (gpuio-head), interleaved.
set -u
R=$OUT/r; mkdir -p $R /tmp/gc/gcache
[ -d .gpucheck/gc/gcache ] && cp -r .gpucheck/gc/gcache/. /tmp/gc/gcache/
export XDG_CACHE_HOME=/tmp/gc/gcache
B=.gpucheck/m62
chmod +x $B/*
stamp() { while IFS= read -r l; do echo "$(date +%T.%N | cut -c1-12) $l"; done; }
finish() { (cd $OUT && tar czf r.tgz r); }
nvidia-smi --query-gpu=name,driver_version --format=csv > $R/gpu.txt 2>&1; uname -r >> $R/gpu.txt; df -T /tmp >> $R/gpu.txt
timeout 100 $B/gpuio-here selftest --backend cuda > $R/selftest-here.log 2>&1; echo "selftest rc $?" >> $R/selftest-here.log
finish
for i in 1 2; do
  for b in here head; do
    GPUIO_LOG=gpuio_core::forward=debug timeout 60 $B/gpuio-$b bench --only requests --backend cuda/forward --repeats 1 2>&1 | stamp > $R/req-$b-$i.log
    finish
  done
done
timeout 60 $B/gpuio-here bench --only requests --backend cuda/mailbox --repeats 1 2>&1 | stamp > $R/req-mailbox-here.log
finish
