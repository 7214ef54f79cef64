#!/bin/bash
# run 182: whole-device NOPs on 16 rings of 64 slots: a pause after each empty forwarder
# round (GPUIO_X_EMPTY_PAUSE_NS) and fewer forwarders than rings
# (GPUIO_X_RINGS_PER_FORWARDER), measurement build m3; NOP latency under the pause.
export XDG_CACHE_HOME=/tmp/gc
R=$OUT/r; mkdir -p $R
M=.gpucheck/s9/m3/gpuio; P=.gpucheck/s9/p
nops() { # slots slot_size env tag
  env $3 GPUIO_LOG=gpuio_core::forward=debug timeout 60 $M run $P/nops.cu --backend cuda/forward --grid 132 --block 1024 --slots $1 --slot-size $2 --arg 16 --arg 0 --arg 0xffffffffffffffff --arg 0 > $R/nops-$4.log 2>&1
  echo "$4 rc $?" >> $R/rc.txt
}
for round in 1 2; do
  nops 1024 1048576 X=1 r16-$round
  nops 1024 1048576 GPUIO_X_EMPTY_PAUSE_NS=300 r16-p300-$round
  nops 1024 1048576 GPUIO_X_EMPTY_PAUSE_NS=1000 r16-p1000-$round
  nops 1024 1048576 GPUIO_X_EMPTY_PAUSE_NS=3000 r16-p3000-$round
  nops 1024 1048576 GPUIO_X_RINGS_PER_FORWARDER=4 r16-k4-$round
  nops 1024 1048576 GPUIO_X_RINGS_PER_FORWARDER=2 r16-k2-$round
  nops 1024 65536 X=1 r4-$round
  nops 1024 65536 GPUIO_X_EMPTY_PAUSE_NS=1000 r4-p1000-$round
done
for p in 0 300 1000; do
  GPUIO_X_EMPTY_PAUSE_NS=$p timeout 60 $M bench --only latency --backend cuda/forward --repeats 3 > $R/lat-p$p.log 2>&1; echo "lat-p$p rc $?" >> $R/rc.txt
done
(cd $OUT && tar czf r.tgz r)
