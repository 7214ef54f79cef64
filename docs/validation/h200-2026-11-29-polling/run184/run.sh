#!/bin/bash
# run 184: whole-device NOPs on 16 rings of 64 slots with the forwarder's answer line
# flushed after each answer (GPUIO_X_FLUSH: 1 CLDEMOTE, 2 CLWB, 3 CLFLUSHOPT),
# measurement build m4; 4 rings and one thread's NOP latency under the same.
export XDG_CACHE_HOME=/tmp/gc
R=$OUT/r; mkdir -p $R
M=.gpucheck/s9/m4/gpuio; P=.gpucheck/s9/p
nops() { # slots slot_size env tag
  env $3 GPUIO_LOG=gpuio_core::forward=debug timeout 60 $M run $P/nops.cu --backend cuda/forward --grid 132 --block 1024 --slots $1 --slot-size $2 --arg 16 --arg 0 --arg 0xffffffffffffffff --arg 0 > $R/nops-$4.log 2>&1
  echo "$4 rc $?" >> $R/rc.txt
}
for round in 1 2; do
  for f in 0 1 2 3; do nops 1024 1048576 GPUIO_X_FLUSH=$f r16-f$f-$round; done
  for f in 0 2 3; do nops 1024 65536 GPUIO_X_FLUSH=$f r4-f$f-$round; done
done
for f in 0 2 3; do
  GPUIO_X_FLUSH=$f timeout 60 $M bench --only latency --backend cuda/forward --repeats 3 > $R/lat-f$f.log 2>&1; echo "lat-f$f rc $?" >> $R/rc.txt
done
(cd $OUT && tar czf r.tgz r)
