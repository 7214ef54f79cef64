#!/bin/bash
# Session 2026-11-27c, call 6: where the queue to the host's 64 B sends spend their time
# (ncu SourceCounters + WarpStateStats of gpuio_k_queue_send, application replay).
S=./.gpucheck/m
mkdir -p /tmp/gc/gcache; cp -r .gpucheck/gc/gcache/. /tmp/gc/gcache/
export XDG_CACHE_HOME=/tmp/gc/gcache
R=$OUT/r; mkdir -p $R
pack() { (cd $OUT && tar czf r.tgz r); }
export GPUIO_BENCH_QUEUE_SIZES=64
t0=$(date +%s)
timeout 420 ncu --clock-control none --replay-mode application -k regex:queue_send --launch-skip 1 -c 1 \
  --section SourceCounters --section WarpStateStats --section SpeedOfLight --section LaunchStats --section Occupancy \
  -o $R/send -f $S/gpuio-cells bench --only queues --backend cuda --repeats 1 > $R/ncu.log 2>&1
echo "== ncu rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
ncu -i $R/send.ncu-rep --page details > $R/details.txt 2>&1
ncu -i $R/send.ncu-rep --page source --csv --print-source sass > $R/sass.csv 2>&1
rm -f $R/send.ncu-rep
pack
tail -5 $R/ncu.log >> $R/summary.txt
cat $R/summary.txt; grep -E "Duration|Registers|Warp Cycles|Achieved Active|stalled|represents" $R/details.txt
