#!/bin/bash
# run 204 (cut to the device time left): gpuio-head = ecba2b5 (code de1a6f9);
# gpuio-v = 24ddf78 + run201-v-vector-loads.patch; gpuio-x = ecba2b5 + run197-x-defines.patch with
# GPUIO_MAX_BLOCK=256 (registers not capped at 64): one-thread latency interleaved x2;
# then direct's request figures in one process (small ops, then bulk), to see whether the
# whole bench's 1 MiB reads (run 202: 24.4 GB/s) fall again after the small ops.
R=$OUT/r; mkdir -p $R; export XDG_CACHE_HOME=/tmp/gc
S=.gpucheck/s16; B=$S/h/gpuio-head; V=$S/h/gpuio-v; X=$S/h/gpuio-x
nvidia-smi -q | grep -i -E "Product Name|Driver Version" | head -3 > $R/gpu.txt; uname -r > $R/uname.txt; date -u >> $R/uname.txt
n=0
for b in b v x b v x; do n=$((n+1)); Y=$V; [ $b = b ] && Y=$B; [ $b = x ] && Y=$X
  GPUIO_X_DEFINES="GPUIO_MAX_BLOCK=256" timeout 40 $Y bench --backend cuda --only latency --repeats 3 --json > $R/lat-$n-$b.json 2> $R/lat-$n-$b.err; echo "lat $b rc $?"
  sed 's/\x1b\[[0-9;]*m//g' $R/lat-$n-$b.err | grep -E "(forward|mailbox): NOP latency p50|forward: one NOP" | cut -c3-170
done
(cd $OUT && tar czf r.tgz r)
timeout 150 $B bench --backend cuda/direct --only requests --repeats 1 --json > $R/req-direct.json 2> $R/req-direct.err; echo "requests rc $? $(date +%T)"
sed 's/\x1b\[[0-9;]*m//g' $R/req-direct.err | grep -E "^  direct: (1 MiB pread(, whole device, one file  | into the staging area.*one file  )|NOPs, whole device 132x1024  )" | cut -c1-110
(cd $OUT && tar czf r.tgz r)
