#!/bin/bash
R=$OUT/r; mkdir -p $R; export XDG_CACHE_HOME=/tmp/gc
K=.gpucheck/p2/nops.cu
for m in m8 m7 m8 m7; do
for shape in "132 1024 16" "1 1 5000" "132 32 64"; do
  set -- $shape
  GPUIO_DEBUG_RING=1 timeout 90 ./.gpucheck/$m/gpuio run $K --backend cuda/direct --grid $1 --block $2 --arg $3 --arg 0 --arg 0xffffffffffffffff --arg 0 --timeout 60 > $R/run-$m-$1x$2.log 2>&1
  echo "== $m $1 x $2 x $3: $(grep -E 'finished' $R/run-$m-$1x$2.log)"; grep -E "RINGDBG|error|ERROR" $R/run-$m-$1x$2.log | head -3
done; done
timeout 200 ./.gpucheck/m8/gpuio selftest --backend cuda > $R/selftest.log 2>&1; echo "selftest rc $?"; tail -1 $R/selftest.log; grep -E "^FAIL|^fail" $R/selftest.log | head
timeout 200 ./.gpucheck/m8/gpuio bench --only requests --backend cuda/direct --repeats 1 > $R/req-direct.log 2>&1; echo "req rc $?"; grep -E "whole device|64 threads" $R/req-direct.log | head -12
(cd $OUT && tar czf r.tgz r)
