#!/bin/bash
# run 86 (H100): d2d7d3c, empty cache: the first selftest (its compile timed), then bench --quick, then the whole bench.
set -u
R=$OUT/r; mkdir -p $R /tmp/gc86
export XDG_CACHE_HOME=/tmp/gc86
B=.gpucheck/m86/gpuio
chmod +x $B
( time timeout 200 $B selftest --backend cuda ) > $R/selftest.log 2>&1; echo "selftest rc $?" >> $R/selftest.log
( time timeout 100 $B bench --quick ) > $R/bench-quick.log 2>&1; echo "rc $?" >> $R/bench-quick.log
ls -la /tmp/gc86/gpuio > $R/cache.txt
timeout $((585 - SECONDS)) $B bench --repeats 3 --plot $R/bench.svg > $R/bench.log 2> $R/bench.err; echo "rc $?" >> $R/bench.log
nvidia-smi -q | grep -E "Product Name|Driver Version|CUDA Version" > $R/gpu.txt; uname -r >> $R/gpu.txt
(cd $OUT && tar czf r.tgz r)
