#!/bin/bash
# run 96 (H100): the whole bench at HEAD (lone-lane wait, the floor without a pause), 3 repeats.
set -u
R=$OUT/r; mkdir -p $R /tmp/gc96
export XDG_CACHE_HOME=/tmp/gc96
B=.gpucheck/m96/gpuio
chmod +x $B
timeout 560 $B bench --repeats 3 --plot $R/bench.svg > $R/bench.log 2> $R/bench.err; echo "rc $?" >> $R/bench.log
nvidia-smi -q | grep -E "Product Name|Driver Version|CUDA Version" > $R/gpu.txt; uname -r >> $R/gpu.txt
(cd $OUT && tar czf r.tgz r)
