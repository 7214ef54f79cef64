#!/bin/bash
# run 74 (H100): built-in kernels compiled as 8 NVRTC programs at once (cold cache),
# then the selftest and the quick bench.
set -u
R=$OUT/r; mkdir -p $R /tmp/gc74
export XDG_CACHE_HOME=/tmp/gc74
B=.gpucheck/m74
chmod +x $B/*
finish() { (cd $OUT && tar czf r.tgz r); }
nproc > $R/nproc.txt; free -g >> $R/nproc.txt
( time timeout 400 $B/gpuio-parts selftest --backend cuda ) > $R/selftest-parts.log 2>&1; echo "selftest rc $?" >> $R/selftest-parts.log
mkdir -p $OUT/cache; cp /tmp/gc74/gpuio/*.cubin $OUT/cache/ 2>/dev/null; ls -la /tmp/gc74/gpuio > $R/cache.txt
finish
( time timeout 120 $B/gpuio-parts bench --quick --backend cuda ) > $R/bench-quick.log 2>&1; echo "bench rc $?" >> $R/bench-quick.log
finish
