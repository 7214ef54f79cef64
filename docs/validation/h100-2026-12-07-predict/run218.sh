#!/bin/bash
# run 218: main (45f4d96) against predict-take (2d954fb), latency on every CUDA pair, interleaved;
# selftest of predict-take; probe: SM / TMA / copy-engine reads of mapped pinned memory
set -u
export XDG_CACHE_HOME=/tmp/gc
R=$OUT/r; mkdir -p $R
D=.gpucheck/s21
T0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/gpu.txt 2>&1
uname -r >> $R/gpu.txt; nproc >> $R/gpu.txt; cat $R/gpu.txt
(nvcc -O3 -std=c++17 -arch=sm_90a -o /tmp/sysread $D/sysread.cu > $R/nvcc.txt 2>&1; echo "nvcc rc $?" >> $R/nvcc.txt) &
NV=$!
timeout 120 $D/main/gpuio bench --backend cuda --only latency --repeats 1 > $R/warm.txt 2>&1
echo "warm rc $? t=$(( $(date +%s) - T0 ))"
for rep in 1 2 3; do
  for v in main pt; do
    timeout 90 $D/$v/gpuio bench --backend cuda --only latency --repeats 3 > $R/lat-$v-$rep.txt 2>&1
    echo "$v $rep rc $? t=$(( $(date +%s) - T0 ))"
    sed 's/\x1b\[[0-9;]*m//g' $R/lat-$v-$rep.txt | grep -E "median of each step|NOP latency p50|pwrite latency p50" | sed 's/gpuio bench:   //; s/median of each step (us): //; s/; the first read found the answer in/ hit/; s/ vs device-host ping-pong through shared memory//' | cut -c1-150
  done
  (cd $OUT && tar czf r.tgz r)
done
wait $NV; cat $R/nvcc.txt | tail -5
timeout 120 /tmp/sysread > $R/sysread-sm.txt 2>&1; echo "sysread sm rc $? t=$(( $(date +%s) - T0 ))"
cat $R/sysread-sm.txt
timeout 60 /tmp/sysread tma > $R/sysread-tma.txt 2>&1; echo "sysread tma rc $? t=$(( $(date +%s) - T0 ))"
cat $R/sysread-tma.txt
(cd $OUT && tar czf r.tgz r)
timeout 200 $D/pt/gpuio selftest --backend cuda > $R/selftest-pt.txt 2>&1
echo "selftest pt rc $? t=$(( $(date +%s) - T0 ))"
sed 's/\x1b\[[0-9;]*m//g' $R/selftest-pt.txt | grep -E "^FAIL|passed" | tail -5
(cd $OUT && tar czf r.tgz r)
