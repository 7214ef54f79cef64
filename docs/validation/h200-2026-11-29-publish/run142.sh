#!/bin/bash
R=$OUT/r; mkdir -p $R; export XDG_CACHE_HOME=/tmp/gc
S=.gpucheck/s5
nops() { # build slots grid block n tag
  timeout 90 $S/$1/gpuio run $S/p/nops.cu --backend cuda/direct --grid $3 --block $4 --slots $2 --arg $5 --arg 0 --arg 0xffffffffffffffff --arg 0 > $R/nops-$1-s$2-$3x$4-$6.log 2>&1
  echo "== $1 slots $2 $3x$4x$5 $6: $(grep -E 'finished' $R/nops-$1-s$2-$3x$4-$6.log | tail -1)"; grep -E "params|rror" $R/nops-$1-s$2-$3x$4-$6.log | head -2
}
for round in r1 r2; do for m in c f g; do nops $m 256 132 1024 16 $round; done; done
for m in c f g; do nops $m 256 132 32 64 r1; done
for m in c f g; do nops $m 1024 132 1024 16 r1; done
nops f 256 1 1 5000 r1
for sl in 256 1024; do
  timeout 90 $S/fd/gpuio run $S/p/cnt.cu --backend cuda/direct --grid 132 --block 1024 --slots $sl --arg 16 --params 16 > $R/cnt-fd-s$sl.log 2>&1
  echo "== fd slots $sl: $(grep -E 'finished' $R/cnt-fd-s$sl.log)"; grep -E "params|rror" $R/cnt-fd-s$sl.log | head -2
done
timeout 150 $S/f/gpuio selftest --backend cuda > $R/selftest-f.log 2>&1; echo "== selftest f rc $?: $(tail -1 $R/selftest-f.log)"
timeout 200 $S/f/gpuio bench --only requests --backend cuda/direct --repeats 1 > $R/req-f.log 2>&1; echo "== req f rc $?"; grep -E "direct: (NOP|64 B|4096 B|whole)" $R/req-f.log | head -12
(cd $OUT && tar czf r.tgz r)
