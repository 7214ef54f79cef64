#!/bin/bash
# run 199: HEAD 609459a (350 ns pause built in): steps2 probe, selftest, latency; then latency
# interleaved against n (descriptor by ld.global.nc), t (n + take by load), y (t + forwarder spins 20 us).
R=$OUT/r; mkdir -p $R; export XDG_CACHE_HOME=/tmp/gc
S=.gpucheck/s14; B=$S/h/gpuio
nvidia-smi -q | grep -i -E "Product Name|Driver Version|Link Width|Link Gen" | head -8 > $R/gpu.txt; uname -r > $R/uname.txt; nproc >> $R/uname.txt; lscpu | grep -E "Model name|L3|NUMA" >> $R/uname.txt
for i in 1 2; do timeout 60 $B run $S/p/steps2.cu --backend cuda/forward --grid 1 --block 32 --arg 1000 --params 96 > $R/steps2-$i.log 2>&1; echo "steps2 rc $?"; grep -E "params|error" $R/steps2-$i.log | head -5 | cut -c1-1500; done
timeout 110 $B selftest --backend cuda > $R/selftest.log 2>&1; echo "selftest rc $?"; tail -2 $R/selftest.log
n=2
for b in h n t y y t n h; do n=$((n+1)); X=$B; [ $b != h ] && X=$S/h/gpuio-$b
  timeout 40 $X bench --only latency --repeats 3 --json > $R/lat-$n-$b.json 2> $R/lat-$n-$b.err; echo "lat $b rc $?"
  grep -E "NOP latency p50|first read" $R/lat-$n-$b.err | cut -c1-150
done
for b in n t y; do X=$S/h/gpuio-$b; timeout 25 $X run $S/nops.cu --backend cuda/forward --grid 132 --block 1024 --arg 16 --arg 0 --arg 0xffffffffffffffff --arg 0 > $R/nops-$b.log 2>&1; echo -n "nops $b rc $? "
grep params $R/nops-$b.log | python3 -c "import sys,re; p=[int(x) for x in re.findall(r'\d+',sys.stdin.read())]; print('M NOPs/s', round(132*1024*16/((p[3]-p[2])/1e9)/1e6,1), 'failed', p[1])"; done
timeout 100 $S/h/gpuio-y selftest --backend cuda > $R/selftest-y.log 2>&1; echo "selftest y rc $?"; tail -1 $R/selftest-y.log
timeout 25 $B run $S/nops.cu --backend cuda/forward --grid 132 --block 1024 --arg 16 --arg 0 --arg 0xffffffffffffffff --arg 0 > $R/nops.log 2>&1; echo -n "nops rc $? "
grep params $R/nops.log | python3 -c "import sys,re; p=[int(x) for x in re.findall(r'\d+',sys.stdin.read())]; print('M NOPs/s', round(132*1024*16/((p[3]-p[2])/1e9)/1e6,1), 'failed', p[1])"
(cd $OUT && tar czf r.tgz r)
