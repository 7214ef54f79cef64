#!/bin/bash
R=$OUT/r; mkdir -p $R; export XDG_CACHE_HOME=/tmp/gc
for shape in "132 1024 16" "132 32 64" "1 1 2000"; do
  set -- $shape
  timeout 90 ./.gpucheck/m9/gpuio run .gpucheck/p3/nopsdbg.cu --backend cuda/direct --grid $1 --block $2 --arg $3 --params 10 --timeout 60 > $R/dbg-$1x$2.log 2>&1
  echo "== dbg $1 x $2 x $3: $(grep -E 'finished' $R/dbg-$1x$2.log)"; grep -E "params|error|ERROR" $R/dbg-$1x$2.log | head -4
done
(cd $OUT && tar czf r.tgz r)
