#!/bin/bash
# run 77 (H100): selftest at 075d2d5 (ABI 11 header again, kernels in eight programs), cold cache.
set -u
R=$OUT/r; mkdir -p $R /tmp/gc77
export XDG_CACHE_HOME=/tmp/gc77
B=.gpucheck/m77
chmod +x $B/*
( time timeout 250 $B/gpuio-head selftest --backend cuda ) > $R/selftest.log 2>&1; echo "selftest rc $?" >> $R/selftest.log
(cd $OUT && tar czf r.tgz r)
