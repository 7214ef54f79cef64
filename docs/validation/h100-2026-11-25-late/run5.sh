#!/bin/bash
# A/B: d = main + lanes-together instrument, e = d + served lanes stay with their group
# (GPUIO_QUEUE_GATHER_NS); then selftest on every CUDA pair and the full bench with e.
S=./.gpucheck/m
R=$OUT/r; mkdir -p $R
for bin in e d; do
  timeout 150 $S/gpuio-$bin bench --only queues --repeats 1 > $R/q-$bin.txt 2> $R/q-$bin.err
  echo "== $bin rc=$?" >> $R/summary.txt
  grep -E "to device|round trip|idle queue" $R/q-$bin.txt >> $R/summary.txt
  grep -E "msg/s;" $R/q-$bin.err >> $R/summary.txt
done
timeout 200 $S/gpuio-e selftest --backend cuda > $R/selftest-e.txt 2> $R/selftest-e.err
echo "== selftest e rc=$?" >> $R/summary.txt
grep -E "passed|^FAIL" $R/selftest-e.txt >> $R/summary.txt
timeout 150 $S/gpuio-e bench --repeats 1 > $R/bench-e.txt 2> $R/bench-e.err
echo "== bench e rc=$?" >> $R/summary.txt
grep -E "msg/s;" $R/bench-e.err >> $R/summary.txt
cd $OUT && tar czf r.tgz r && cat r/summary.txt
