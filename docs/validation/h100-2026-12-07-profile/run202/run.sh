#!/bin/bash
# run 202: HEAD 5179e6f (code = de1a6f9): selftest, the whole bench, an ncu stall profile of one thread's NOP anatomy (forward).
R=$OUT/r; mkdir -p $R; export XDG_CACHE_HOME=/tmp/gc
S=.gpucheck/s16; B=$S/h/gpuio
nvidia-smi -q | grep -i -E "Product Name|Driver Version|Link Width|Link Gen" | head -8 > $R/gpu.txt; uname -r > $R/uname.txt; nproc >> $R/uname.txt; date -u >> $R/uname.txt
timeout 110 $B selftest --backend cuda > $R/selftest.log 2>&1; echo "selftest rc $?"; tail -2 $R/selftest.log | cut -c1-300
timeout 330 $B bench --repeats 3 --json --plot $R/bench.svg > $R/bench.json 2> $R/bench.err; echo "bench rc $?"
grep -E "^  (forward|direct|mailbox): (NOP latency p50|one NOP|1 MiB p(read|write), whole device, one file  |NOPs, whole)" $R/bench.err | sed 's/\x1b\[[0-9;]*m//g' | cut -c1-220
timeout 140 ncu --clock-control none --replay-mode application --target-processes all -k regex:nop_anatomy -c 1 --section SourceCounters --section WarpStateStats --import-source no -o $R/anat -f $B bench --only latency --backend cuda/forward > $R/ncu.log 2>&1; echo "ncu rc $?"; tail -3 $R/ncu.log | cut -c1-200
timeout 40 ncu -i $R/anat.ncu-rep --page source --csv --print-source sass > $R/anat-sass.csv 2> $R/anat-sass.err; echo "sass rc $? $(wc -l < $R/anat-sass.csv)"
timeout 30 ncu -i $R/anat.ncu-rep --page details --csv > $R/anat-details.csv 2>&1
(cd $OUT && tar czf r.tgz --exclude='*.ncu-rep' r)
