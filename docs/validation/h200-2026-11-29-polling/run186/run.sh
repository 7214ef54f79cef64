#!/bin/bash
# run 186: whole-device NOPs on 16 rings of 64 slots: each scanned stamp's line
# demoted (GPUIO_X_SCAN=1) or flushed (3) after the load, long pauses after empty
# rounds (20 us), measurement build m6; 4 rings alongside.
export XDG_CACHE_HOME=/tmp/gc
R=$OUT/r; mkdir -p $R
M=.gpucheck/s9/m6/gpuio; P=.gpucheck/s9/p
nops() { # slots slot_size env tag
  env $3 GPUIO_LOG=gpuio_core::forward=debug timeout 60 $M run $P/nops.cu --backend cuda/forward --grid 132 --block 1024 --slots $1 --slot-size $2 --arg 16 --arg 0 --arg 0xffffffffffffffff --arg 0 > $R/nops-$4.log 2>&1
  echo "$4 rc $?" >> $R/rc.txt
}
for round in 1 2; do
  nops 1024 1048576 X=1 r16-$round
  nops 1024 1048576 GPUIO_X_SCAN=1 r16-scan1-$round
  nops 1024 1048576 GPUIO_X_SCAN=3 r16-scan3-$round
  nops 1024 1048576 GPUIO_X_EMPTY_PAUSE_NS=20000 r16-p20k-$round
  nops 1024 65536 X=1 r4-$round
  nops 1024 65536 GPUIO_X_SCAN=1 r4-scan1-$round
  nops 1024 65536 GPUIO_X_SCAN=3 r4-scan3-$round
done
for s in 0 1 3; do
  GPUIO_X_SCAN=$s timeout 60 $M bench --only latency --backend cuda/forward --repeats 3 > $R/lat-s$s.log 2>&1; echo "lat-s$s rc $?" >> $R/rc.txt
done
(cd $OUT && tar czf r.tgz r)
