#!/bin/bash
# A/B/A: the host drains a group's cells in one copy (new) vs main; then new with 16
# rings and 16 drain threads (does the rate follow the host threads?).
S=./.gpucheck/m
R=$OUT/r; mkdir -p $R
i=0
for bin in new main new; do
  i=$((i+1)); t0=$(date +%s)
  timeout 220 $S/gpuio-$bin bench --only queues --repeats 1 > $R/q-$i-$bin.txt 2> $R/q-$i-$bin.err
  echo "== queues $bin rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
  grep -E "queue to host|copy-back" $R/q-$i-$bin.txt $R/q-$i-$bin.err | grep -E "M msg/s|copy-back:" >> $R/summary.txt
done
for rings in 16; do
  t0=$(date +%s)
  GPUIO_BENCH_QUEUE_SIZES=64,256 GPUIO_BENCH_QUEUE_RINGS=$rings GPUIO_BENCH_QUEUE_DRAINS=$rings timeout 100 $S/gpuio-new bench --only queues --repeats 1 > $R/rings-$rings.txt 2> $R/rings-$rings.err
  echo "== new rings $rings rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
  grep -E "msg/s;" $R/rings-$rings.err >> $R/summary.txt
done
cd $OUT && tar czf r.tgz r && cat r/summary.txt
