#!/bin/bash
R=$OUT/r; mkdir -p $R; export XDG_CACHE_HOME=/tmp/gc GPUIO_DEBUG_RING=1
G=./.gpucheck/m2/gpuio; K=.gpucheck/p2/nops.cu
for shape in "132 1024 16" "132 64 64" "132 32 64" "1 32 2000" "1 1 5000"; do
  set -- $shape
  timeout 90 $G run $K --backend cuda/direct --grid $1 --block $2 --arg $3 --arg 0 --arg 0xffffffffffffffff --arg 0 --timeout 60 > $R/run-$1x$2.log 2>&1
  echo "== $1 x $2 x $3: $(grep -E 'finished' $R/run-$1x$2.log)"; grep RINGDBG $R/run-$1x$2.log
done
(cd $OUT && tar czf r.tgz r)
