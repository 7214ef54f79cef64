#!/bin/bash
# Last call of the session. A = main (93b441c: + the NOP anatomy), B = A + every lane
# prefetching its long message once its group has cells (branch queue-prefetch) + the
# requests' read of closing in flight while the slot is taken (branch
# request-closing-overlap); the two touch disjoint paths (queue sends / requests).
# selftest on B; queues B/A/B; requests on every CUDA pair with A (the NOP anatomy,
# printf now drained in runs), then with B; B's to-host figure with 16 rings.
S=./.gpucheck/m
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv > $R/machine.txt 2>&1; uname -r >> $R/machine.txt
t0=$(date +%s)
timeout 200 $S/gpuio-B selftest --backend cuda > $R/selftest-B.txt 2> $R/selftest-B.err
echo "== selftest B rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
grep -E "passed|^FAIL" $R/selftest-B.txt >> $R/summary.txt
i=0
for bin in B A B; do
  i=$((i+1)); t0=$(date +%s)
  timeout 200 $S/gpuio-$bin bench --only queues --repeats 1 > $R/q-$i-$bin.txt 2> $R/q-$i-$bin.err
  echo "== queues $bin rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
  grep -E "queue to host, [0-9]+ B messages" $R/q-$i-$bin.txt >> $R/summary.txt
  grep -E "4096 B: .*msg/s;|copy-back:" $R/q-$i-$bin.err >> $R/summary.txt
done
for bin in A B; do
for pair in mailbox forward direct; do
  t0=$(date +%s)
  timeout 90 $S/gpuio-$bin bench --only requests --backend cuda/$pair --repeats 1 > $R/req-$bin-$pair.txt 2> $R/req-$bin-$pair.err
  echo "== requests $bin $pair rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
  grep -E "median of each step" $R/req-$bin-$pair.err >> $R/summary.txt
  grep -E "NOP latency p50|64 B pwrite latency p50|printf bytes, whole" $R/req-$bin-$pair.txt >> $R/summary.txt
done
done
t0=$(date +%s)
GPUIO_BENCH_QUEUE_SIZES=64,256 GPUIO_BENCH_QUEUE_RINGS=16 GPUIO_BENCH_QUEUE_DRAINS=16 timeout 60 $S/gpuio-B bench --only queues --repeats 1 > $R/rings16.txt 2> $R/rings16.err
echo "== B 16 rings rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
grep -E "msg/s;" $R/rings16.err | grep -v "host sent" >> $R/summary.txt
cd $OUT && tar czf r.tgz r && cat r/summary.txt
