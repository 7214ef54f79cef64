#!/bin/bash
# run 100 (H100): `gpuio bench --only bulk` (new): the 1 MiB figures through the slots
# and staged (no device copy), each figure's host CPU split by kind of thread.
set -u
R=$OUT/r; mkdir -p $R /tmp/gc100
export XDG_CACHE_HOME=/tmp/gc100
B=.gpucheck/m100/gpuio
chmod +x $B
finish() { (cd $OUT && tar czf r.tgz r); }
nvidia-smi --query-gpu=name,driver_version,pcie.link.gen.current,pcie.link.width.current --format=csv > $R/gpu.txt 2>&1
uname -r >> $R/gpu.txt; nproc >> $R/gpu.txt
timeout 420 $B bench --only bulk --repeats 3 --json > $R/bulk.json 2> $R/bulk.err; echo "rc $?" >> $R/bulk.err
finish
