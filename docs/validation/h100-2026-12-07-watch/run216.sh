#!/bin/bash
# run 216: main (1b08c02) against mailbox-watch (1c9cc23), latency on every CUDA pair, interleaved; selftest of mailbox-watch
set -u
export XDG_CACHE_HOME=/tmp/gc
R=$OUT/r; mkdir -p $R
D=.gpucheck/s20
T0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/gpu.txt 2>&1
uname -r >> $R/gpu.txt; nproc >> $R/gpu.txt; cat $R/gpu.txt
timeout 120 $D/main/gpuio bench --backend cuda --only latency --repeats 1 > $R/warm.txt 2>&1
echo "warm rc $? t=$(( $(date +%s) - T0 ))"
for rep in 1 2 3; do
  for v in main mw; do
    timeout 90 $D/$v/gpuio bench --backend cuda --only latency --repeats 3 > $R/lat-$v-$rep.txt 2>&1
    echo "$v $rep rc $? t=$(( $(date +%s) - T0 ))"
    sed 's/\x1b\[[0-9;]*m//g' $R/lat-$v-$rep.txt | grep -E "median of each step|NOP latency p50|pwrite latency p50" | sed 's/gpuio bench:   //; s/median of each step (us): //; s/; the first read found the answer in/ hit/; s/ vs device-host ping-pong through shared memory//' | cut -c1-150
  done
  (cd $OUT && tar czf r.tgz r)
done
timeout 200 $D/mw/gpuio selftest --backend cuda > $R/selftest-mw.txt 2>&1
echo "selftest mw rc $? t=$(( $(date +%s) - T0 ))"
sed 's/\x1b\[[0-9;]*m//g' $R/selftest-mw.txt | grep -E "^FAIL|passed" | tail -5
(cd $OUT && tar czf r.tgz r)
