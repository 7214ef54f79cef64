#!/bin/bash
# run 215: ABI 14's five-load batch (b5), first-poll pauses 250/175, forward's watch; then the whole bench on b5
set -u
export XDG_CACHE_HOME=/tmp/gc
R=$OUT/r; mkdir -p $R
D=.gpucheck/s19
T0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/gpu.txt 2>&1
uname -r >> $R/gpu.txt; nproc >> $R/gpu.txt
cat $R/gpu.txt
for v in base new p250 p175 b5 b5p250; do
  timeout 120 $D/$v/gpuio bench --backend cuda/forward --only latency --repeats 1 > $R/warm-$v.txt 2>&1
  echo "warm $v rc $? t=$(( $(date +%s) - T0 ))"
done
timeout 200 $D/b5/gpuio selftest --backend cuda > $R/selftest-b5.txt 2>&1
echo "selftest b5 rc $? t=$(( $(date +%s) - T0 ))"
sed 's/\x1b\[[0-9;]*m//g' $R/selftest-b5.txt | grep -E "passed|FAIL|failed" | tail -5
(cd $OUT && tar czf r.tgz r)
for rep in 1 2 3 4; do
  for v in base new p250 p175 b5 b5p250; do
    timeout 90 $D/$v/gpuio bench --backend cuda/forward --only latency --repeats 3 > $R/lat-$v-$rep.txt 2>&1
    echo "$v $rep rc $? t=$(( $(date +%s) - T0 ))"
    sed 's/\x1b\[[0-9;]*m//g' $R/lat-$v-$rep.txt | grep -E "median of each step|NOP latency p50|pwrite latency p50" | sed 's/gpuio bench:   forward: one NOP, median of each step (us)://; s/ vs device-host ping-pong through shared memory//' | cut -c1-150
  done
  (cd $OUT && tar czf r.tgz r)
done
timeout 420 $D/b5/gpuio bench --repeats 3 --json --plot $R/bench-b5.svg > $R/bench-b5.json 2> $R/bench-b5.txt
echo "bench b5 rc $? t=$(( $(date +%s) - T0 ))"
sed 's/\x1b\[[0-9;]*m//g' $R/bench-b5.txt | grep -vE "^gpuio bench: (measuring|  )" | tail -80 | cut -c1-220
(cd $OUT && tar czf r.tgz r)
