#!/bin/bash
# 1) selftest on main (CUDA pairs) — first GPU run of the loom-found device fixes
# 2) A/B/A of the claim back-off (bo) against main on the host queues
# 3) mailbox server threads 1/4/8 on main, requests only, cuda/mailbox
S=./.gpucheck/m
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv > $R/machine.txt 2>&1; uname -r >> $R/machine.txt; nproc >> $R/machine.txt
t0=$(date +%s)
timeout 250 $S/gpuio-main selftest --backend cuda > $R/selftest-main.txt 2> $R/selftest-main.err
echo "== selftest main rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
grep -E "passed|^FAIL" $R/selftest-main.txt >> $R/summary.txt
i=0
for bin in main bo main; do
  i=$((i+1))
  t0=$(date +%s)
  timeout 220 $S/gpuio-$bin bench --only queues --repeats 1 > $R/q-$i-$bin.txt 2> $R/q-$i-$bin.err
  echo "== queues $bin rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
  grep -E "queue" $R/q-$i-$bin.txt | grep -vE "^gpuio" >> $R/summary.txt
  grep -E "msg/s;" $R/q-$i-$bin.err >> $R/summary.txt
done
for n in 1 4 8; do
  t0=$(date +%s)
  GPUIO_MAILBOX_THREADS=$n timeout 100 $S/gpuio-main bench --only requests --backend cuda/mailbox --repeats 1 > $R/mb-$n.txt 2> $R/mb-$n.err
  echo "== mailbox threads $n rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
  grep -E "whole device|NOP latency p50|NOPs, 64" $R/mb-$n.txt >> $R/summary.txt
done
cd $OUT && tar czf r.tgz r && cat r/summary.txt
