#!/bin/bash
R=$OUT/r; mkdir -p $R; export XDG_CACHE_HOME=/tmp/gc
K=.gpucheck/p2/nops.cu
for m in m4 m3 m4; do
for shape in "132 1024 16" "1 1 5000"; do
  set -- $shape
  GPUIO_DEBUG_RING=1 timeout 90 ./.gpucheck/$m/gpuio run $K --backend cuda/direct --grid $1 --block $2 --arg $3 --arg 0 --arg 0xffffffffffffffff --arg 0 --timeout 60 > $R/run-$m-$1x$2.log 2>&1
  echo "== $m $1 x $2 x $3: $(grep -E 'finished' $R/run-$m-$1x$2.log)"; grep -E "RINGDBG|params|error|ERROR" $R/run-$m-$1x$2.log | head -4
done; done

(cd $OUT && tar czf r.tgz r)
