#!/bin/bash
R=$OUT/r; mkdir -p $R; export XDG_CACHE_HOME=/tmp/gc
for v in 0 1 2 3; do
for shape in "132 1024 16" "1 1 2000"; do
  set -- $shape
  timeout 100 ./.gpucheck/m10/gpuio run .gpucheck/p3/nt$v.cu --backend cuda/direct --grid $1 --block $2 --arg $3 --params 10 --timeout 60 > $R/v$v-$1x$2.log 2>&1
  echo "== v$v $1 x $2 x $3: $(grep -E 'finished' $R/v$v-$1x$2.log)"; grep -E "params|error|ERROR" $R/v$v-$1x$2.log | head -3
done; done
(cd $OUT && tar czf r.tgz r)
