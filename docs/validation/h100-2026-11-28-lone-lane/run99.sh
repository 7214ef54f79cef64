#!/bin/bash
# run 99 (H100): direct's marked transfers with io-wq's bounded workers capped at 4, 8, 16
# or left as the kernel sets them (an experiment build reading GPUIO_EXP_BOUNDED):
# bench --quick on cuda/direct, requests only, twice each, interleaved.
set -u
R=$OUT/r; mkdir -p $R /tmp/gc99
export XDG_CACHE_HOME=/tmp/gc99
B=.gpucheck/m99/gpuio
chmod +x $B
finish() { (cd $OUT && tar czf r.tgz r); }
for i in 1 2; do
  for cap in 0 16 8 4; do
    GPUIO_EXP_BOUNDED=$cap timeout 60 $B bench --quick --only requests --backend cuda/direct > $R/q$i-cap$cap.log 2> $R/q$i-cap$cap.err; echo "rc $?" >> $R/q$i-cap$cap.log
    finish
  done
done
