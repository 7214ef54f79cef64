#!/bin/bash
# Call 1 of 2026-11-26: main 90445aa as it stands. The NOP anatomy on every pair,
# forward rings 1/4/8 on the whole-device requests, the queues.
S=./.gpucheck/m
R=$OUT/r; mkdir -p $R
pack() { (cd $OUT && tar czf r.tgz r); }
nvidia-smi --query-gpu=name,driver_version --format=csv > $R/machine.txt 2>&1; uname -r >> $R/machine.txt; nproc >> $R/machine.txt
t0=$(date +%s)
timeout 120 $S/gpuio-main bench --only latency --repeats 3 > $R/lat.txt 2> $R/lat.err
echo "== latency rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
grep -E "latency p50|p99|median of each step" $R/lat.txt $R/lat.err >> $R/summary.txt
pack
for rings in 1 4 8; do
  t0=$(date +%s)
  GPUIO_FORWARD_RINGS=$rings timeout 110 $S/gpuio-main bench --only requests --backend cuda/forward --repeats 1 > $R/fwd-$rings.txt 2> $R/fwd-$rings.err
  echo "== forward rings $rings rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
  grep -E "whole device|1 MiB|M ops/s|GB/s" $R/fwd-$rings.txt >> $R/summary.txt
  pack
done
t0=$(date +%s)
timeout 170 $S/gpuio-main bench --only queues --repeats 1 > $R/q.txt 2> $R/q.err
echo "== queues rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
grep -E "msg/s|printf|idle" $R/q.txt >> $R/summary.txt
pack
cat $R/summary.txt
