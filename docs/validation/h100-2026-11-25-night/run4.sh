#!/bin/bash
# A/B/A: a cell's owner loads 8 message words before handing them out (fill) vs the
# one-copy drain alone (new); then the CUDA selftest on fill.
S=./.gpucheck/m
R=$OUT/r; mkdir -p $R
i=0
for bin in fill new fill; do
  i=$((i+1)); t0=$(date +%s)
  timeout 220 $S/gpuio-$bin bench --only queues --repeats 1 > $R/q-$i-$bin.txt 2> $R/q-$i-$bin.err
  echo "== queues $bin rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
  grep -E "queue to host|copy-back" $R/q-$i-$bin.txt $R/q-$i-$bin.err | grep -E "M msg/s|copy-back:" | sed 's/^[^:]*://' >> $R/summary.txt
done
t0=$(date +%s)
timeout 250 $S/gpuio-fill selftest --backend cuda > $R/selftest-fill.txt 2> $R/selftest-fill.err
echo "== selftest fill rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
grep -E "passed|^FAIL" $R/selftest-fill.txt >> $R/summary.txt
cd $OUT && tar czf r.tgz r && cat r/summary.txt
