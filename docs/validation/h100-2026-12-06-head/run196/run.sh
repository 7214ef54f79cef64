#!/bin/bash
# run 196: HEAD 871dc05 (first-poll pause built in): selftest, whole bench; then latency and
# whole-device NOPs interleaved against ce884d3 (gpuio-o, before the pause) and gpuio-m
# (forward words loaded with the checks).
R=$OUT/r; mkdir -p $R; export XDG_CACHE_HOME=/tmp/gc
S=.gpucheck/s11; B=$S/h/gpuio; O=$S/h/gpuio-o; M=$S/h/gpuio-m
nvidia-smi -q | grep -i -E "Product Name|Driver Version|Link Width|Link Gen" | head -8 > $R/gpu.txt; uname -r > $R/uname.txt; nproc >> $R/uname.txt; lscpu | grep -E "Model name|L3|NUMA" >> $R/uname.txt
for i in 1 2; do timeout 60 $B run $S/p/steps.cu --backend cuda/forward --grid 1 --block 32 --arg 1000 --params 96 > $R/steps-$i.log 2>&1; echo "steps rc $?"; grep -E "params|error" $R/steps-$i.log | head -5 | cut -c1-1500; done
timeout 110 $B selftest --backend cuda > $R/selftest.log 2>&1; echo "selftest rc $?"; tail -2 $R/selftest.log
timeout 330 $B bench --repeats 3 --json --plot $R/bench.svg > $R/bench.json 2> $R/bench.err; echo "bench rc $?"
python3 $S/ext.py $R/bench.err
grep -E "^  (forward|direct|mailbox): (NOP latency p50|1 MiB pread, whole device, one file  |NOPs, whole)" $R/bench.err | cut -c1-200
grep -E "floor|ping" $R/bench.err | head -5 | cut -c1-200
n=0
for b in o n m o n m; do n=$((n+1)); X=$B; [ $b = o ] && X=$O; [ $b = m ] && X=$M
  timeout 40 $X bench --only latency --repeats 3 --json > $R/lat-$n-$b.json 2> $R/lat-$n-$b.err; echo "lat $b rc $?"
  grep -E "NOP latency p50|floor" $R/lat-$n-$b.err | cut -c1-190
done
for b in o n m; do n=$((n+1)); X=$B; [ $b = o ] && X=$O; [ $b = m ] && X=$M
  timeout 25 $X run $S/p/nops.cu --backend cuda/forward --grid 132 --block 1024 --arg 16 --arg 0 --arg 0xffffffffffffffff --arg 0 > $R/nops-$n-$b.log 2>&1; echo -n "nops $b rc $? "
  grep params $R/nops-$n-$b.log | python3 -c "import sys,re; p=[int(x) for x in re.findall(r'\d+',sys.stdin.read())]; print('M NOPs/s', round(132*1024*16/((p[3]-p[2])/1e9)/1e6,1), 'failed', p[1])"
done
(cd $OUT && tar czf r.tgz r)
