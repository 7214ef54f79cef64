#!/bin/bash
# run 180: what makes whole-device NOPs on 16 rings of 64 slots slow: the forwarders'
# spin before sleeping (GPUIO_X_SPIN_FOR_US) and the device's far waiters' sleep
# (GPUIO_X_FAR_NS, GPUIO_X_AHEAD_NS in the kernel file), measurement build m.
export XDG_CACHE_HOME=/tmp/gc
R=$OUT/r; mkdir -p $R
M=.gpucheck/s9/m/gpuio; P=.gpucheck/s9/p
nops() { # kernel slots slot_size env tag
  env $4 GPUIO_LOG=gpuio_core::forward=debug timeout 60 $M run $P/$1 --backend cuda/forward --grid 132 --block 1024 --slots $2 --slot-size $3 --arg 16 --arg 0 --arg 0xffffffffffffffff --arg 0 > $R/nops-$5.log 2>&1
  echo "$5 rc $?" >> $R/rc.txt
}
for round in 1 2; do
  nops nops.cu 1024 1048576 X=1 base$round
  nops nops.cu 1024 1048576 GPUIO_X_SPIN_FOR_US=5000 spin5ms$round
  nops nops-far32.cu 1024 1048576 X=1 far32-$round
  nops nops-near.cu 1024 1048576 X=1 near$round
  nops nops-far32.cu 1024 1048576 GPUIO_X_SPIN_FOR_US=5000 far32-spin5ms$round
  nops nops.cu 1024 65536 X=1 r4-$round
  nops nops.cu 2048 1048576 X=1 s2048-$round
  nops nops.cu 1024 1048576 GPUIO_FORWARD_RINGS=8 r8-$round
done
(cd $OUT && tar czf r.tgz r)
