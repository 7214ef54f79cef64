#!/bin/bash
# run 106 (H200): gpuio selftest on every CUDA pair, then --quick --only bulk on cuda/direct, at 2acaec9.
set -u
R=$OUT/r; mkdir -p $R /tmp/gc106
export XDG_CACHE_HOME=/tmp/gc106
B=.gpucheck/m106/gpuio
chmod +x $B
timeout 200 $B selftest --backend cuda > $R/selftest.log 2>&1; echo "rc $?" >> $R/selftest.log
timeout 60 $B bench --quick --only bulk --backend cuda/direct > $R/bulk-quick.log 2>&1; echo "rc $?" >> $R/bulk-quick.log
(cd $OUT && tar czf r.tgz r)
