#!/bin/bash
# run 98 (H100): 4952fbb (direct's large transfers IOSQE_ASYNC): selftest on cuda/direct, then
# the whole bench, 3 repeats.
set -u
R=$OUT/r; mkdir -p $R /tmp/gc98
export XDG_CACHE_HOME=/tmp/gc98
B=.gpucheck/m98/gpuio
chmod +x $B
finish() { (cd $OUT && tar czf r.tgz r); }
timeout 100 $B selftest --backend cuda/direct > $R/selftest-direct.log 2>&1; echo "rc $?" >> $R/selftest-direct.log
finish
timeout 480 $B bench --repeats 3 --plot $R/bench.svg > $R/bench.log 2> $R/bench.err; echo "rc $?" >> $R/bench.log
nvidia-smi -q | grep -E "Product Name|Driver Version|CUDA Version" > $R/gpu.txt; uname -r >> $R/gpu.txt
finish
