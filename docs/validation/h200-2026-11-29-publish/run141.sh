#!/bin/bash
R=$OUT/r; mkdir -p $R; export XDG_CACHE_HOME=/tmp/gc
S=.gpucheck/s5
for sl in 256 1024 4096 256; do
  timeout 90 $S/c/gpuio run $S/p/nops.cu --backend cuda/direct --grid 132 --block 1024 --slots $sl --arg 16 --arg 0 --arg 0xffffffffffffffff --arg 0 > $R/nops-c-s$sl.log 2>&1
  echo "== c slots $sl: $(grep -E 'finished' $R/nops-c-s$sl.log | tail -1)"; grep -E "params|rror" $R/nops-c-s$sl.log | head -2
done
for sl in 256 1024; do
  timeout 90 $S/d/gpuio run $S/p/cnt.cu --backend cuda/direct --grid 132 --block 1024 --slots $sl --arg 16 --params 16 > $R/cnt-d-s$sl.log 2>&1
  echo "== d slots $sl: $(grep -E 'finished' $R/cnt-d-s$sl.log)"; grep -E "params|rror" $R/cnt-d-s$sl.log | head -2
done
timeout 150 $S/c/gpuio selftest --backend cuda > $R/selftest-c.log 2>&1; echo "== selftest c rc $?: $(tail -1 $R/selftest-c.log)"
for round in 1 2; do for m in c e; do
  timeout 120 $S/$m/gpuio bench --only bulk --backend cuda/direct --repeats 1 > $R/bulk-$m-r$round.log 2>&1; echo "== bulk $m r$round rc $?"; grep -E "direct: 1 MiB pwrite, whole device, one file  " $R/bulk-$m-r$round.log | head -3
done; done
(cd $OUT && tar czf r.tgz r)
