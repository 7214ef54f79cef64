#!/bin/bash
R=$OUT/r; mkdir -p $R; export XDG_CACHE_HOME=/tmp/gc
G=./.gpucheck/m1/gpuio; K=.gpucheck/p2/nops.cu
run() { # name backend slots
  python3 .gpucheck/p2/sampler.py $R/samp-$1.txt 25 & SP=$!
  timeout 90 $G run $K --backend $2 --grid 132 --block 1024 --arg 16 --arg 0 --arg 0xffffffffffffffff --arg 0 --slots $3 --timeout 60 > $R/run-$1.log 2>&1; echo "rc $?" >> $R/run-$1.log
  kill $SP 2>/dev/null; wait $SP 2>/dev/null
  grep -iE "params|took|close|rc " $R/run-$1.log | head -8
}
run direct256 cuda/direct 256
run forward256 cuda/forward 256
run direct1024 cuda/direct 1024
t0=$(date +%s)
timeout 240 ncu --clock-control none --replay-mode application -k regex:nops -c 1 --section SourceCounters --section WarpStateStats -o $R/nops -f $G run $K --backend cuda/direct --grid 132 --block 1024 --arg 16 --arg 0 --arg 0xffffffffffffffff --arg 0 --timeout 60 > $R/ncu.log 2>&1
echo "ncu rc=$? $(( $(date +%s)-t0 )) s" | tee -a $R/ncu.log
ncu -i $R/nops.ncu-rep --page source --csv --print-source sass > $R/nops-sass.csv 2>/dev/null
ncu -i $R/nops.ncu-rep --page details > $R/nops-details.txt 2>/dev/null
rm -f $R/nops.ncu-rep
(cd $OUT && tar czf r.tgz r)
