#!/bin/bash
# A/B of the queue-to-device read path (a: main + diagnostics, b: three host words
# in one round trip, short poll pause, each lane loads its own cell in one batch),
# then the CUDA selftest on b.
S=./.gpucheck/m
R=$OUT/r; mkdir -p $R
for bin in b a b; do
  timeout 220 $S/gpuio-$bin bench --only queues --repeats 1 > $R/q-$bin.txt 2> $R/q-$bin.err
  echo "== $bin rc=$?" >> $R/summary.txt
  grep -E "to device|round trip|idle queue" $R/q-$bin.txt >> $R/summary.txt
  grep -E "msg/s;" $R/q-$bin.err >> $R/summary.txt
  cp $R/q-$bin.txt $R/q-$bin-last.txt
done
timeout 250 $S/gpuio-b selftest --backend cuda > $R/selftest-b.txt 2> $R/selftest-b.err
echo "== selftest b rc=$?" >> $R/summary.txt
grep -E "passed|^FAIL" $R/selftest-b.txt >> $R/summary.txt
cd $OUT && tar czf r.tgz r && cat r/summary.txt
