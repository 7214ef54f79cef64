#!/bin/bash
# run 188: candidate c1 (forwarders leave an entry they answered unread for
# GPUIO_FORWARD_ANSWER_HOLD_NS): whole-device NOPs on 16 rings of 64 slots, 4 rings
# of 256, the default channel; one warp's NOPs on the default channel; latency.
export XDG_CACHE_HOME=/tmp/gc
R=$OUT/r; mkdir -p $R
M=.gpucheck/s9/c1/gpuio; P=.gpucheck/s9/p
nops() { # slots slot_size hold grid block per tag
  GPUIO_FORWARD_ANSWER_HOLD_NS=$3 GPUIO_LOG=gpuio_core::forward=debug timeout 60 $M run $P/nops.cu --backend cuda/forward --grid $4 --block $5 --slots $1 --slot-size $2 --arg $6 --arg 0 --arg 0xffffffffffffffff --arg 0 > $R/nops-$7.log 2>&1
  echo "$7 rc $?" >> $R/rc.txt
}
for round in 1 2; do
  for h in 0 4000 6000 10000; do nops 1024 1048576 $h 132 1024 16 r16-h$h-$round; done
  for h in 0 4000 10000; do nops 1024 65536 $h 132 1024 16 r4-h$h-$round; done
  for h in 0 4000 10000; do nops 256 65536 $h 132 1024 16 def-h$h-$round; done
  for h in 0 4000 6000 10000; do nops 256 65536 $h 1 32 20000 warp-h$h-$round; done
done
for h in 0 4000; do
  GPUIO_FORWARD_ANSWER_HOLD_NS=$h timeout 60 $M bench --only latency --backend cuda/forward --repeats 3 > $R/lat-h$h.log 2>&1; echo "lat-h$h rc $?" >> $R/rc.txt
done
(cd $OUT && tar czf r.tgz r)
