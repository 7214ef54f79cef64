#!/bin/bash
# run 197: the first-poll pause's length at HEAD 871dc05 (gpuio-x: NVRTC takes -D from
# GPUIO_X_DEFINES), interleaved: 200 (the default) / 350 / 500 / 700 ns, twice; one
# thread's round trips on every CUDA pair, then whole-device NOPs at 200 and 500.
R=$OUT/r; mkdir -p $R; export XDG_CACHE_HOME=/tmp/gc
S=.gpucheck/s12; X=$S/h/gpuio-x
n=0
for v in 200 350 500 700 200 350 500 700; do n=$((n+1))
  GPUIO_X_DEFINES="GPUIO_FIRST_POLL_NS=${v}u" timeout 45 $X bench --backend cuda --only latency --repeats 3 --json > $R/lat-$n-$v.json 2> $R/lat-$n-$v.err; echo "lat $v rc $?"
  grep -E "(forward|mailbox): NOP latency p50|forward: 64 B pwrite latency p50" $R/lat-$n-$v.err | cut -c1-175
done
for v in 200 500 200 500; do n=$((n+1))
  GPUIO_X_DEFINES="GPUIO_FIRST_POLL_NS=${v}u" timeout 25 $X run $S/p/nops.cu --backend cuda/forward --grid 132 --block 1024 --arg 16 --arg 0 --arg 0xffffffffffffffff --arg 0 > $R/nops-$n-$v.log 2>&1; echo -n "nops $v rc $? "
  grep params $R/nops-$n-$v.log | python3 -c "import sys,re; p=[int(x) for x in re.findall(r'\d+',sys.stdin.read())]; print('M NOPs/s', round(132*1024*16/((p[3]-p[2])/1e9)/1e6,1), 'failed', p[1])"
done
(cd $OUT && tar czf r.tgz r)
