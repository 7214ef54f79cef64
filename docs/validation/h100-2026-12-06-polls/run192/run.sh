#!/bin/bash
R=$OUT/r; mkdir -p $R; export XDG_CACHE_HOME=/tmp/gc
S=.gpucheck/s10; B=$S/h/gpuio
nvidia-smi -q | grep -i -E "Product Name|Driver Version|Link Width|Link Gen" | head -8 > $R/gpu.txt; uname -r > $R/uname.txt; nproc >> $R/uname.txt; lscpu | grep -E "Model name|L3|NUMA" >> $R/uname.txt
timeout 120 $B selftest --backend cuda > $R/selftest.log 2>&1; echo "selftest rc $?"; tail -3 $R/selftest.log
timeout 440 $B bench --repeats 3 --json --plot $R/bench.svg > $R/bench.json 2> $R/bench.err; echo "bench rc $?"
python3 $S/ext.py $R/bench.err
grep -E "^  (forward|direct|mailbox): (NOP latency p50|1 MiB pread, whole device, one file  |NOPs, whole)" $R/bench.err | cut -c1-200
(cd $OUT && tar czf r.tgz r)
