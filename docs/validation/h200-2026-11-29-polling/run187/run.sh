#!/bin/bash
# run 187: whole-device NOPs on 16 rings of 64 slots: entries the forwarder answered
# left unread for GPUIO_X_HOLD_NS after the answer (measurement build m7); 4 rings and
# one thread's NOP latency alongside.
export XDG_CACHE_HOME=/tmp/gc
R=$OUT/r; mkdir -p $R
M=.gpucheck/s9/m7/gpuio; P=.gpucheck/s9/p
nops() { # slots slot_size env tag
  env $3 GPUIO_LOG=gpuio_core::forward=debug timeout 60 $M run $P/nops.cu --backend cuda/forward --grid 132 --block 1024 --slots $1 --slot-size $2 --arg 16 --arg 0 --arg 0xffffffffffffffff --arg 0 > $R/nops-$4.log 2>&1
  echo "$4 rc $?" >> $R/rc.txt
}
for round in 1 2; do
  for h in 0 1000 3000 10000; do nops 1024 1048576 GPUIO_X_HOLD_NS=$h r16-h$h-$round; done
  for h in 0 3000; do nops 1024 65536 GPUIO_X_HOLD_NS=$h r4-h$h-$round; done
  nops 256 65536 GPUIO_X_HOLD_NS=3000 def-h3000-$round
  nops 256 65536 X=1 def-$round
done
for h in 0 3000; do
  GPUIO_X_HOLD_NS=$h timeout 60 $M bench --only latency --backend cuda/forward --repeats 3 > $R/lat-h$h.log 2>&1; echo "lat-h$h rc $?" >> $R/rc.txt
done
(cd $OUT && tar czf r.tgz r)
