#!/bin/bash
# run 207: same build as run 206: built-in kernels' compile time, fresh cache, small-block build off / on;
# cuda_check main (launch_build check).
R=$OUT/r; mkdir -p $R
S=.gpucheck/s17; B=$S/h/gpuio
date -u > $R/uname.txt
for m in 0 1; do
  t=$(date +%s%N); XDG_CACHE_HOME=/tmp/gc-$m GPUIO_SMALL_BLOCK_BUILD=$m timeout 200 $B bench --backend cuda/forward --only latency --repeats 1 > $R/compile-$m.out 2> $R/compile-$m.err; rc=$?
  echo "compile small=$m rc $rc wall $(( ($(date +%s%N)-t)/1000000 )) ms, cache files $(ls /tmp/gc-$m/gpuio | wc -l)"
done
(cd $OUT && tar czf r.tgz r)
export XDG_CACHE_HOME=/tmp/gc-1
t=$(date +%s); timeout 280 $S/h/cuda_check main > $R/check.log 2>&1; echo "check rc $? $(( $(date +%s)-t ))s"; grep -E "FAIL|a launch runs|nvrtc compile" $R/check.log | cut -c1-600
date -u >> $R/uname.txt
(cd $OUT && tar czf r.tgz r)
