#!/bin/bash
R=$OUT/r; mkdir -p $R; export XDG_CACHE_HOME=/tmp/gc
for shape in "132 1024 16" "132 32 64"; do
  set -- $shape
  GPUIO_DEBUG_RING=1 timeout 90 ./.gpucheck/m11/gpuio run .gpucheck/p2/nops.cu --backend cuda/direct --grid $1 --block $2 --arg $3 --arg 0 --arg 0xffffffffffffffff --arg 0 --timeout 60 > $R/run-$1x$2.log 2>&1
  echo "== $1 x $2 x $3: $(grep -E 'finished' $R/run-$1x$2.log)"; grep -E "RINGDBG|error|ERROR" $R/run-$1x$2.log | cut -c1-1500 | head -5
done
(cd $OUT && tar czf r.tgz r)
