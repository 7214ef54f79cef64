#!/bin/bash
# run 81 (H100): ncu of the 64 B queue-to-host kernel (application replay: the bench runs once per pass).
set -u
R=$OUT/r; mkdir -p $R /tmp/gc81
cp -r .gpucheck/gc80/gpuio /tmp/gc81/
export XDG_CACHE_HOME=/tmp/gc81
B=.gpucheck/m79/gpuio-note
chmod +x $B
export GPUIO_BENCH_QUEUE_SIZES=64
timeout 400 ncu --replay-mode application --kernel-name regex:queue_send --launch-skip 1 --launch-count 1 \
  --section SpeedOfLight --section WarpStateStats --section SourceCounters --section MemoryWorkloadAnalysis --section LaunchStats --section Occupancy \
  -o $R/q64 -f $B bench --backend cuda/forward --only queues --repeats 1 > $R/ncu.log 2>&1; echo "rc $?" >> $R/ncu.log
ncu -i $R/q64.ncu-rep --page details > $R/details.txt 2>&1
ncu -i $R/q64.ncu-rep --page source --csv --print-source sass > $R/source.csv 2>&1
ls -la $R >> $R/ncu.log
(cd $OUT && tar czf r.tgz r)
