#!/bin/bash
# run 181: counts of the turn's "stuck" verdicts (measurement build m2), and without the
# holder_thread == self test (GPUIO_X_NO_SELF), whole-device NOPs.
export XDG_CACHE_HOME=/tmp/gc
R=$OUT/r; mkdir -p $R
M=.gpucheck/s9/m2/gpuio; P=.gpucheck/s9/p
nops() { # kernel slots slot_size env tag
  env $4 timeout 60 $M run $P/$1 --backend cuda/forward --grid 132 --block 1024 --slots $2 --slot-size $3 --arg 16 --arg 0 --arg 0xffffffffffffffff --arg 0 --params 8 > $R/nops-$5.log 2>&1
  echo "$5 rc $?" >> $R/rc.txt
}
for round in 1 2; do
  nops nops-cnt.cu 1024 1048576 X=1 cnt-r16-$round
  nops nops-cnt-noself.cu 1024 1048576 X=1 noself-r16-$round
  nops nops-cnt.cu 1024 65536 X=1 cnt-r4-$round
  nops nops-cnt-noself.cu 1024 65536 X=1 noself-r4-$round
  nops nops-cnt.cu 1024 1048576 GPUIO_FORWARD_RINGS=8 cnt-r8-$round
  nops nops-cnt-noself.cu 1024 1048576 GPUIO_FORWARD_RINGS=8 noself-r8-$round
done
(cd $OUT && tar czf r.tgz r)
