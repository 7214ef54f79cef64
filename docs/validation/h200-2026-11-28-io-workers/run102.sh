#!/bin/bash
# run 102 (H200): the whole bench at 639ad8d (direct's io-wq workers capped at the
# machine's CPUs; staged bulk passes; CPU split), then selftest on cuda/direct.
set -u
R=$OUT/r; mkdir -p $R /tmp/gc102
export XDG_CACHE_HOME=/tmp/gc102
B=.gpucheck/m102/gpuio
chmod +x $B
finish() { (cd $OUT && tar czf r.tgz r); }
nvidia-smi --query-gpu=name,driver_version,pcie.link.gen.current,pcie.link.width.current --format=csv > $R/gpu.txt 2>&1
uname -r >> $R/gpu.txt; nproc >> $R/gpu.txt
timeout 470 $B bench --repeats 3 --plot $R/bench.svg --json > $R/bench.json 2> $R/bench.err; echo "rc $?" >> $R/bench.err
finish
timeout 90 $B selftest --backend cuda/direct > $R/selftest.log 2>&1; echo "rc $?" >> $R/selftest.log
finish
