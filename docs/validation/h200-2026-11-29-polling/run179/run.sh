#!/bin/bash
# run 179: whole-device NOPs (132 x 1024 x 16) on forward by slots x slot size x rings,
# with the forwarders' debug stats: what makes 1024 x 1 MiB slow.
export XDG_CACHE_HOME=/tmp/gc
R=$OUT/r; mkdir -p $R
A=.gpucheck/s9/a/gpuio
nops() { # slots slot_size env tag
  env $3 GPUIO_LOG=gpuio_core::forward=debug timeout 90 $A run .gpucheck/s9/p/nops.cu --backend cuda/forward --grid 132 --block 1024 --slots $1 --slot-size $2 --arg 16 --arg 0 --arg 0xffffffffffffffff --arg 0 > $R/nops-$4.log 2>&1
  echo "$4 rc $?" >> $R/rc.txt
}
for round in 1 2; do
  nops 1024 1048576 X=1 e1-bulk$round
  nops 1024 65536 GPUIO_FORWARD_RINGS=16 e2-64k-r16-$round
  nops 1024 65536 X=1 e3-64k$round
  nops 1024 1048576 GPUIO_FORWARD_RINGS=4 e4-bulk-r4-$round
  nops 256 1048576 X=1 e5-256bulk$round
  nops 1024 1048576 GPUIO_FORWARD_WQ_SHARE=1 e6-bulk-share1-$round
done
(cd $OUT && tar czf r.tgz r)
