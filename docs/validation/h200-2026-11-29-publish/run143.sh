#!/bin/bash
R=$OUT/r; mkdir -p $R; export XDG_CACHE_HOME=/tmp/gc
S=.gpucheck/s5
(cd $S/probe && nvcc -O3 -arch=sm_90 -o ldprobe ldprobe.cu > $R/ldprobe-build.log 2>&1 && timeout 60 ./ldprobe > $R/ldprobe.txt 2>&1; echo "== ldprobe rc $?"); cat $R/ldprobe-build.log | head -5; cat $R/ldprobe.txt
nops() { # build slots grid block n tag
  timeout 90 $S/$1/gpuio run $S/p/nops.cu --backend cuda/direct --grid $3 --block $4 --slots $2 --arg $5 --arg 0 --arg 0xffffffffffffffff --arg 0 > $R/nops-$1-s$2-$3x$4-$6.log 2>&1
  echo "== $1 slots $2 $3x$4x$5 $6: $(grep -E 'finished' $R/nops-$1-s$2-$3x$4-$6.log | tail -1)"; grep -E "params|rror" $R/nops-$1-s$2-$3x$4-$6.log | head -2
}
for round in r1 r2; do for m in c h i; do nops $m 256 132 1024 16 $round; done; done
for m in c h i; do nops $m 1024 132 1024 16 r1; done
for sl in 256 1024; do
  timeout 90 $S/id/gpuio run $S/p/cnt.cu --backend cuda/direct --grid 132 --block 1024 --slots $sl --arg 16 --params 16 > $R/cnt-id-s$sl.log 2>&1
  echo "== id slots $sl: $(grep -E 'finished' $R/cnt-id-s$sl.log)"; grep -E "params|rror" $R/cnt-id-s$sl.log | head -2
done
(cd $OUT && tar czf r.tgz r)
