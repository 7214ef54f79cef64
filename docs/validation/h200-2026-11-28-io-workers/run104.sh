#!/bin/bash
# run 104 (H200): direct's write gates (one file's marked writes one at a time: m104a;
# two at a time: m104b) against 639ad8d (m102), interleaved; bulk only on cuda/direct,
# then selftest on cuda/direct with m104a.
set -u
R=$OUT/r; mkdir -p $R /tmp/gc104
export XDG_CACHE_HOME=/tmp/gc104
finish() { (cd $OUT && tar czf r.tgz r); }
for b in m104a m102 m104b; do
  chmod +x .gpucheck/$b/gpuio
  timeout 120 .gpucheck/$b/gpuio bench --only bulk --backend cuda/direct > $R/bulk-$b.log 2>&1; echo "rc $?" >> $R/bulk-$b.log
  finish
done
timeout 90 .gpucheck/m104a/gpuio selftest --backend cuda/direct > $R/selftest-m104a.log 2>&1; echo "rc $?" >> $R/selftest-m104a.log
finish
