#!/bin/bash
R=$OUT/r; mkdir -p $R; export XDG_CACHE_HOME=/tmp/gc
for shape in "132 1024 16" "1 1 2000" "132 1024 16"; do
  set -- $shape
  GPUIO_DEBUG_MIRROR=1 timeout 90 ./.gpucheck/m14/gpuio run .gpucheck/p3/nm.cu --backend cuda/direct --grid $1 --block $2 --arg $3 --params 12 --timeout 60 > $R/nm-$1x$2.log 2>&1
  echo "== $1 x $2 x $3: $(grep -E 'finished' $R/nm-$1x$2.log)"; grep -E "MIRROR|params|error|ERROR" $R/nm-$1x$2.log | head -4
done
(cd $OUT && tar czf r.tgz r)
