#!/bin/bash
R=$OUT/r; mkdir -p $R; export XDG_CACHE_HOME=/tmp/gc
K=.gpucheck/p2/nops.cu
for m in m6 m4 m6 m4; do
for shape in "132 1024 16" "1 1 5000"; do
  set -- $shape
  timeout 90 ./.gpucheck/$m/gpuio run $K --backend cuda/direct --grid $1 --block $2 --arg $3 --arg 0 --arg 0xffffffffffffffff --arg 0 --timeout 60 > $R/run-$m-$1x$2.log 2>&1
  echo "== $m $1 x $2 x $3: $(grep -E 'finished' $R/run-$m-$1x$2.log)"; grep -E "error|ERROR" $R/run-$m-$1x$2.log | head -4
done; done
for shape in "132 1024 16" "1 1 5000"; do
  set -- $shape
  timeout 90 ./.gpucheck/m6/gpuio run .gpucheck/p3/nopsdbg.cu --backend cuda/direct --grid $1 --block $2 --arg $3 --params 10 --timeout 60 > $R/dbg-$1x$2.log 2>&1
  echo "== dbg $1 x $2 x $3: $(grep -E 'finished' $R/dbg-$1x$2.log)"; grep -E "params|error|ERROR" $R/dbg-$1x$2.log | head -4
done
timeout 200 ./.gpucheck/m6/gpuio selftest --backend cuda > $R/selftest.log 2>&1; echo "selftest rc $?"; tail -1 $R/selftest.log; grep -E "^FAIL|^fail" $R/selftest.log | head
(cd $OUT && tar czf r.tgz r)
