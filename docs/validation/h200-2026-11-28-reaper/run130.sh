#!/bin/bash
R=$OUT/r; mkdir -p $R; export XDG_CACHE_HOME=/tmp/gc
K=.gpucheck/p3/nopsdbg.cu
for shape in "132 1024 16" "1 1 5000" "132 32 64"; do
  set -- $shape
  timeout 90 ./.gpucheck/m5/gpuio run $K --backend cuda/direct --grid $1 --block $2 --arg $3 --params 10 --timeout 60 > $R/run-$1x$2.log 2>&1
  echo "== $1 x $2 x $3: $(grep -E 'finished' $R/run-$1x$2.log)"; grep -E "params|error|ERROR" $R/run-$1x$2.log | head -4
done
(cd $OUT && tar czf r.tgz r)
