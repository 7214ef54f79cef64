#!/bin/bash
# run 206: HEAD + small-block build (uncommitted, .gpucheck/s17/h/gpuio): selftest, cuda_check,
# latency interleaved off/on x3, bulk forward+direct off/on, user kernel nops.cu 132x256 off/on.
R=$OUT/r; mkdir -p $R; export XDG_CACHE_HOME=/tmp/gc
S=.gpucheck/s17; B=$S/h/gpuio
nvidia-smi -q | grep -i -E "Product Name|Driver Version" | head -3 > $R/gpu.txt; uname -r > $R/uname.txt; nproc >> $R/uname.txt; date -u >> $R/uname.txt
t=$(date +%s); timeout 150 $B selftest --backend cuda > $R/selftest.log 2>&1; echo "selftest rc $? $(( $(date +%s)-t ))s"; tail -2 $R/selftest.log | sed 's/\x1b\[[0-9;]*m//g' | cut -c1-300
timeout 100 $S/h/cuda_check main > $R/check.log 2>&1; echo "check rc $?"; grep -E "FAIL|a launch runs" $R/check.log | cut -c1-400
(cd $OUT && tar czf r.tgz r)
n=0
for m in 0 1 0 1 0 1; do n=$((n+1)); if [ $m = 0 ]; then E=0; else E=1; fi
  GPUIO_SMALL_BLOCK_BUILD=$E timeout 40 $B bench --backend cuda --only latency --repeats 3 --json > $R/lat-$n-$m.json 2> $R/lat-$n-$m.err; echo "lat $m rc $?"
  sed 's/\x1b\[[0-9;]*m//g' $R/lat-$n-$m.err | grep -E "(forward|mailbox|direct): NOP latency p50|forward: one NOP|64 B pwrite" | cut -c3-170
done
(cd $OUT && tar czf r.tgz r)
for t in forward direct; do for m in 0 1; do n=$((n+1)); if [ $m = 0 ]; then E=0; else E=1; fi
  GPUIO_SMALL_BLOCK_BUILD=$E timeout 100 $B bench --backend cuda/$t --only bulk --repeats 1 --json > $R/bulk-$n-$t-$m.json 2> $R/bulk-$n-$t-$m.err; echo "bulk $t $m rc $?"
  sed 's/\x1b\[[0-9;]*m//g' $R/bulk-$n-$t-$m.err | grep -E "^  $t: 1 MiB p(read|write), whole device, one file  " | cut -c1-130
done; done
(cd $OUT && tar czf r.tgz r)
for m in 0 1 0 1; do n=$((n+1)); if [ $m = 0 ]; then E=0; else E=1; fi
  GPUIO_SMALL_BLOCK_BUILD=$E GPUIO_LOG=gpuio_backend_cuda_mapped=debug timeout 60 $B run $S/p/nops.cu --backend cuda/forward --grid 132 --block 256 --arg 64 --arg 0 --arg 0xffffffffffffffff --arg 0 > $R/nops-$n-$m.out 2> $R/nops-$n-$m.err; echo "nops $m rc $?"
  sed 's/\x1b\[[0-9;]*m//g' $R/nops-$n-$m.err | grep -E "params|small_block_build" | cut -c1-250 | tail -3
done
date -u >> $R/uname.txt
(cd $OUT && tar czf r.tgz r)
