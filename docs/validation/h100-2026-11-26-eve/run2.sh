#!/bin/bash
# Session 2026-11-26 evening, call 2: (a) how fast SM loads copy pinned host memory
# (copyprobe.cu, nvcc) against cudaMemcpy; (b) the queue to the device with 1/2/4/8
# host senders, a ring each (binary R) against main; (c) selftest on R.
S=./.gpucheck/m
mkdir -p /tmp/gc && cp -r .gpucheck/gc/gcache /tmp/gc/ 2>/dev/null
export XDG_CACHE_HOME=/tmp/gc/gcache
R=$OUT/r; mkdir -p $R
pack() { (cd $OUT && tar czf r.tgz r); }
t0=$(date +%s)
nvcc -O3 -arch=sm_90 -o /tmp/copyprobe .gpucheck/k/copyprobe.cu > $R/copyprobe.log 2>&1 && timeout 120 /tmp/copyprobe >> $R/copyprobe.log 2>&1
echo "== copyprobe rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
cat $R/copyprobe.log >> $R/summary.txt
pack
i=0
q() { # name senders binary
  i=$((i+1)); t0=$(date +%s)
  GPUIO_BENCH_QUEUE_SIZES=64,256,4096 GPUIO_BENCH_QUEUE_SENDERS=$2 timeout 240 $S/$3 bench --only queues --backend cuda --repeats 1 > $R/q$i-$1.log 2>&1
  echo "== q$i $1 (senders $2, $3) rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
  grep -E "queue to device|to the device|B: .* M msg/s; .*host thread" $R/q$i-$1.log >> $R/summary.txt
  pack
}
q R-s4 4 gpuio-R
q main 1 gpuio-main
q R-s1 1 gpuio-R
q R-s8 8 gpuio-R
q R-s2 2 gpuio-R
q R-s4b 4 gpuio-R
t0=$(date +%s)
timeout 200 $S/gpuio-R selftest --backend cuda > $R/selftest-R.log 2>&1
echo "== selftest R rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
grep -E "passed|failed|FAIL" $R/selftest-R.log | tail -5 >> $R/summary.txt
pack
cat $R/summary.txt
