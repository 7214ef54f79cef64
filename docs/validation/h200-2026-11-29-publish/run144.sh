#!/bin/bash
R=$OUT/r; mkdir -p $R; export XDG_CACHE_HOME=/tmp/gc
S=.gpucheck/s5
nops() { # build slots grid block n tag
  timeout 90 $S/$1/gpuio run $S/p/nops.cu --backend cuda/direct --grid $3 --block $4 --slots $2 --arg $5 --arg 0 --arg 0xffffffffffffffff --arg 0 > $R/nops-$1-s$2-$3x$4-$6.log 2>&1
  echo "== $1 slots $2 $3x$4x$5 $6: $(grep -E 'finished' $R/nops-$1-s$2-$3x$4-$6.log | tail -1)"; grep -E "params|rror" $R/nops-$1-s$2-$3x$4-$6.log | head -2
}
for round in r1 r2; do for m in c k; do nops $m 256 132 1024 16 $round; done; done
for m in c k; do nops $m 1024 132 1024 16 r1; nops $m 256 132 32 64 r1; nops $m 256 1 1 5000 r1; done
for sl in 256 1024; do
  timeout 90 $S/kd/gpuio run $S/p/cnt.cu --backend cuda/direct --grid 132 --block 1024 --slots $sl --arg 16 --params 16 > $R/cnt-kd-s$sl.log 2>&1
  echo "== kd slots $sl: $(grep -E 'finished' $R/cnt-kd-s$sl.log)"; grep -E "params|rror" $R/cnt-kd-s$sl.log | head -3
done
timeout 150 $S/k/gpuio selftest --backend cuda > $R/selftest-k.log 2>&1; echo "== selftest k rc $?: $(tail -1 $R/selftest-k.log)"
timeout 200 $S/k/gpuio bench --only requests --backend cuda/direct --repeats 1 > $R/req-k.log 2>&1; echo "== req k rc $?"; grep -E "direct: (NOP|64 B|4096 B|whole)" $R/req-k.log | head -12
(cd $OUT && tar czf r.tgz r)
