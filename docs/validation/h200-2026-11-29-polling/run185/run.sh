#!/bin/bash
# run 185: whole-device NOPs on 16 rings of 64 slots (1024 x 1 MiB) against 4 rings
# (1024 x 64 KiB): by threads (132 x 1024 / 256 / 64), and with the device's answer
# polls paced differently (cap 8192 / 256 ns, no eager polls); measurement build m5.
export XDG_CACHE_HOME=/tmp/gc
R=$OUT/r; mkdir -p $R
M=.gpucheck/s9/m5/gpuio; P=.gpucheck/s9/p
nops() { # kernel slots slot_size block tag
  GPUIO_LOG=gpuio_core::forward=debug timeout 60 $M run $P/$1 --backend cuda/forward --grid 132 --block $4 --slots $2 --slot-size $3 --arg 16 --arg 0 --arg 0xffffffffffffffff --arg 0 > $R/nops-$5.log 2>&1
  echo "$5 rc $?" >> $R/rc.txt
}
for round in 1 2; do
  for b in 1024 256 64; do
    nops nops.cu 1024 1048576 $b r16-b$b-$round
    nops nops.cu 1024 65536 $b r4-b$b-$round
  done
  nops nops-cap8k.cu 1024 1048576 1024 r16-cap8k-$round
  nops nops-cap256.cu 1024 1048576 1024 r16-cap256-$round
  nops nops-eager0.cu 1024 1048576 1024 r16-eager0-$round
done
(cd $OUT && tar czf r.tgz r)
