#!/bin/bash
# run 105 (H200): gpuio selftest on every CUDA pair at 3853a13.
set -u
R=$OUT/r; mkdir -p $R /tmp/gc105
export XDG_CACHE_HOME=/tmp/gc105
B=.gpucheck/m105/gpuio
chmod +x $B
timeout 200 $B selftest --backend cuda > $R/selftest.log 2>&1; echo "rc $?" >> $R/selftest.log
(cd $OUT && tar czf r.tgz r)
