#!/bin/bash
# run 59 (H100): forward sends pwrites that follow each other as one WRITEV (gpuio-runs) vs 528cade (gpuio-head).
set -u
R=$OUT/r; mkdir -p $R /tmp/gc/gcache
[ -d .gpucheck/gc/gcache ] && cp -r .gpucheck/gc/gcache/. /tmp/gc/gcache/
export XDG_CACHE_HOME=/tmp/gc/gcache
B=.gpucheck/m59
chmod +x $B/*
stamp() { while IFS= read -r l; do echo "$(date +%T.%N | cut -c1-12) $l"; done; }
finish() { (cd $OUT && tar czf r.tgz r); }
timeout 150 $B/gpuio-runs selftest --backend cuda > $R/selftest-runs.log 2>&1; echo "selftest rc $?" >> $R/selftest-runs.log
finish
for i in 1 2; do
  for b in runs head; do
    GPUIO_LOG=gpuio_core::forward=debug timeout 60 $B/gpuio-$b bench --only requests --backend cuda/forward --repeats 1 2>&1 | stamp > $R/req-$b-$i.log
    finish
  done
done
