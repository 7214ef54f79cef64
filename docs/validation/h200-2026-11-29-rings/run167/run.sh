#!/bin/bash
R=$OUT/r; mkdir -p $R; export XDG_CACHE_HOME=/tmp/gc
S=.gpucheck/s7
nvidia-smi -q | grep -i -E "Product Name|Driver Version|CUDA Version|Link Width|Link Gen|Max|Current" | head -16 > $R/gpu.txt; uname -r >> $R/gpu.txt; nproc >> $R/gpu.txt
timeout 420 $S/fin/gpuio bench --repeats 3 --json --plot $R/bench.svg > $R/bench.json 2> $R/bench.err; echo "bench rc $?"
timeout 120 $S/fin/gpuio selftest --backend cuda > $R/selftest.log 2>&1; echo "selftest rc $?"; tail -3 $R/selftest.log
(cd $OUT && tar czf r.tgz r)
