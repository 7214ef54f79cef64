#!/bin/bash
# run 101 (H200): direct's io-wq cap (an experiment build reading GPUIO_EXP_WORKERS,
# the cap on io-wq's unbound workers; 0: no cap registered): bulk only on cuda/direct.
set -u
R=$OUT/r; mkdir -p $R /tmp/gc101
export XDG_CACHE_HOME=/tmp/gc101
B=.gpucheck/m101/gpuio
chmod +x $B
finish() { (cd $OUT && tar czf r.tgz r); }
for w in 4 16 0 8; do
  GPUIO_EXP_WORKERS=$w timeout 150 $B bench --only bulk --backend cuda/direct > $R/w$w.log 2>&1; echo "rc $?" >> $R/w$w.log
  finish
done
