#!/bin/bash
# run 83 (H100): ncu of the 64 B queue-to-host kernel (application replay: the bench runs once per pass).
set -u
R=$OUT/r; mkdir -p $R /tmp/gc83
cp -r .gpucheck/gc82/gpuio /tmp/gc83/
export XDG_CACHE_HOME=/tmp/gc83
B=.gpucheck/m82/gpuio-fill
chmod +x $B
export GPUIO_BENCH_QUEUE_SIZES=64
timeout 400 ncu --replay-mode application --kernel-name regex:queue_send --launch-skip 1 --launch-count 1 \
  --section SpeedOfLight --section WarpStateStats --section SourceCounters \
  -o $R/q64 -f $B bench --backend cuda/forward --only queues --repeats 1 > $R/ncu.log 2>&1; echo "rc $?" >> $R/ncu.log
ncu -i $R/q64.ncu-rep --page details > $R/details.txt 2>&1
ncu -i $R/q64.ncu-rep --page source --csv --print-source sass > $R/source.csv 2>&1
ncu --query-metrics 2>/dev/null | grep -i -E "pcie|sysmem|nvlrx|nvltx" > $R/pcie-metrics.txt
ls -la $R >> $R/ncu.log
(cd $OUT && tar czf r.tgz r)
