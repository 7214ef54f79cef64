#!/bin/bash
# run 87 (H100), 2026-11-28: branch tohost-credits — credonly (9e99426: credits), credits (b6408dd: credits + whole-warp fill) — against main
# (76986f2): cold selftest of b6408dd, then the queue figures interleaved, two passes.
set -u
R=$OUT/r; mkdir -p $R /tmp/gcc /tmp/gcm /tmp/gco
B=.gpucheck/m87
chmod +x $B/*
nvidia-smi --query-gpu=name,driver_version,pcie.link.gen.current,pcie.link.width.current --format=csv > $R/gpu.txt 2>&1
( time XDG_CACHE_HOME=/tmp/gcc timeout 150 $B/gpuio-credits selftest --backend cuda ) > $R/selftest-credits.log 2>&1; echo "selftest rc $?" >> $R/selftest-credits.log
for pass in 1 2; do
  for b in main credonly credits; do
    [ $SECONDS -gt 520 ] && break
    c=/tmp/gcm; [ $b = credits ] && c=/tmp/gcc; [ $b = credonly ] && c=/tmp/gco
    XDG_CACHE_HOME=$c timeout 100 $B/gpuio-$b bench --backend cuda/forward --only queues --repeats 1 > $R/q-$b-$pass.log 2>&1
    echo "rc $?" >> $R/q-$b-$pass.log
  done
done
(cd $OUT && tar czf r.tgz r)
