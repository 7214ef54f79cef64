#!/bin/bash
# Why the queue to the device moves 5 M msg/s and a queue round trip takes 20 us:
# which side sets the pace (host waits for room?), then per-SASS stall profiles of
# the receiving kernel and of the echo kernel.
B=./.gpucheck/m/gpuio
R=$OUT/r; mkdir -p $R
timeout 120 $B bench --only queues --repeats 1 > $R/q.txt 2> $R/q.err
echo "queues rc=$?" >> $R/summary.txt
grep -E "to device|round trip|idle queue|msg/s;" $R/q.txt $R/q.err >> $R/summary.txt
prof() { # name kernel-regex skip
  GPUIO_BENCH_QUEUE_SIZES=64 timeout 200 ncu --clock-control none --replay-mode application -k regex:$2 --launch-skip $3 --launch-count 1 \
    --section SourceCounters --section WarpStateStats --section SpeedOfLight \
    --metrics gpu__time_duration.sum,smsp__inst_executed.sum,pcie__read_bytes.sum,pcie__write_bytes.sum \
    -o $R/$1 $B bench --only queues --quick > $R/$1.log 2>&1
  echo "ncu $1 rc=$?" >> $R/summary.txt
  ncu --import $R/$1.ncu-rep --print-details all > $R/$1-details.txt 2>&1
  ncu --import $R/$1.ncu-rep --page source --print-source sass --csv > $R/$1-sass.csv 2>&1
  grep -E "Duration|pcie__|Warp Cycles Per Issued|Stall" $R/$1-details.txt | head -20 >> $R/summary.txt
}
prof recv queue_recv 0
prof echo queue_echo 0
cd $OUT && tar czf r.tgz r && cat r/summary.txt
