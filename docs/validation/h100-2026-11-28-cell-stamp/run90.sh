#!/bin/bash
# run 90 (H100): 20f8570 (8-byte cell stamp), the whole bench, 3 repeats, with its plot.
set -u
R=$OUT/r; mkdir -p $R /tmp/gc90
export XDG_CACHE_HOME=/tmp/gc90
B=.gpucheck/m90/gpuio
chmod +x $B
timeout 560 $B bench --repeats 3 --plot $R/bench.svg > $R/bench.log 2> $R/bench.err; echo "rc $?" >> $R/bench.log
nvidia-smi -q | grep -E "Product Name|Driver Version|CUDA Version" > $R/gpu.txt; uname -r >> $R/gpu.txt
(cd $OUT && tar czf r.tgz r)
