#!/bin/bash
# run 103 (H200): gpuio selftest on every CUDA pair at 639ad8d.
set -u
R=$OUT/r; mkdir -p $R /tmp/gc103
export XDG_CACHE_HOME=/tmp/gc103
B=.gpucheck/m102/gpuio
chmod +x $B
timeout 200 $B selftest --backend cuda > $R/selftest.log 2>&1; echo "rc $?" >> $R/selftest.log
(cd $OUT && tar czf r.tgz r)
