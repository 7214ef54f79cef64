#!/bin/bash
R=$OUT/r; mkdir -p $R; export XDG_CACHE_HOME=/tmp/gc
for v in 0 1 2 0; do
  timeout 100 ./.gpucheck/m12/gpuio run .gpucheck/p3/nf$v.cu --backend cuda/direct --grid 132 --block 1024 --arg 16 --params 14 --timeout 60 > $R/nf$v.log 2>&1
  echo "== v$v: $(grep -E 'finished' $R/nf$v.log)"; grep -E "params|error|ERROR" $R/nf$v.log | head -3
done
timeout 100 ./.gpucheck/m12/gpuio run .gpucheck/p3/nf0.cu --backend cuda/direct --grid 1 --block 1 --arg 2000 --params 14 --timeout 60 > $R/nf0-1x1.log 2>&1
echo "== v0 1x1: $(grep -E 'finished' $R/nf0-1x1.log)"; grep -E "params" $R/nf0-1x1.log
(cd $OUT && tar czf r.tgz r)
