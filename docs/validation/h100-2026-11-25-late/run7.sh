#!/bin/bash
# A/B: f = main (sender thread before the launch), g = f + a pause after a lost
# compare-and-swap for a ring's tail (claims to the device, reservations to the host);
# then selftest on every CUDA pair with g.
S=./.gpucheck/m
R=$OUT/r; mkdir -p $R
for bin in g f; do
  timeout 140 $S/gpuio-$bin bench --only queues --repeats 1 > $R/q-$bin.txt 2> $R/q-$bin.err
  echo "== $bin rc=$?" >> $R/summary.txt
  grep -E "queue to|round trip|idle queue" $R/q-$bin.txt | grep -v "CPU per\|first message" >> $R/summary.txt
  grep -E "msg/s;" $R/q-$bin.err >> $R/summary.txt
done
timeout 170 $S/gpuio-g selftest --backend cuda > $R/selftest-g.txt 2> $R/selftest-g.err
echo "== selftest g rc=$?" >> $R/summary.txt
grep -E "passed|^FAIL" $R/selftest-g.txt >> $R/summary.txt
cd $OUT && tar czf r.tgz r && cat r/summary.txt
