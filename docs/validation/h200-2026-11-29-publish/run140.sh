#!/bin/bash
R=$OUT/r; mkdir -p $R; export XDG_CACHE_HOME=/tmp/gc
S=.gpucheck/s5
nvidia-smi --query-gpu=name,driver_version,pcie.link.gen.current,pcie.link.width.current --format=csv > $R/gpu.txt 2>&1
for round in 1 2; do
 for m in a b; do
  for shape in "132 1024 16" "132 32 64" "1 1 5000"; do
   set -- $shape
   timeout 90 $S/$m/gpuio run $S/p/nops.cu --backend cuda/direct --grid $1 --block $2 --arg $3 --arg 0 --arg 0xffffffffffffffff --arg 0 > $R/nops-$m-$1x$2-r$round.log 2>&1
   echo "== $m $1x$2x$3 r$round: $(grep -E 'finished' $R/nops-$m-$1x$2-r$round.log | tail -1)"; grep -E "params|rror" $R/nops-$m-$1x$2-r$round.log | head -3
  done
 done
done
for shape in "132 1024 16" "132 32 64"; do
  set -- $shape
  timeout 90 $S/adbg/gpuio run $S/p/pubdbg.cu --backend cuda/direct --grid $1 --block $2 --arg $3 --params 8 > $R/pubdbg-$1x$2.log 2>&1
  echo "== adbg $1x$2x$3: $(grep -E 'finished' $R/pubdbg-$1x$2.log)"; grep -E "params|rror" $R/pubdbg-$1x$2.log | head -3
done
timeout 150 $S/b/gpuio selftest --backend cuda > $R/selftest-b.log 2>&1; echo "== selftest b rc $?: $(tail -1 $R/selftest-b.log)"
for m in a b; do
  timeout 150 $S/$m/gpuio bench --only requests --backend cuda/direct --repeats 1 > $R/req-$m.log 2>&1; echo "== req $m rc $?"; grep -iE "nop|pwrite|pread|write \+" $R/req-$m.log | head -12
done
(cd $OUT && tar czf r.tgz r)
