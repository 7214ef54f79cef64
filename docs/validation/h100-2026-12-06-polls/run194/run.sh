#!/bin/bash
# run 194: a pause before the first poll of a round trip: the floor's ping-pong (pp2.cu)
# and one thread's forward / mailbox NOPs (latd.cu), D interleaved in one launch.
R=$OUT/r; mkdir -p $R; export XDG_CACHE_HOME=/tmp/gc
S=.gpucheck/s10; B=$S/h/gpuio
nvcc -O3 -arch=sm_90 -std=c++17 -o /tmp/pp2 $S/p/pp2.cu > $R/nvcc.log 2>&1; echo "nvcc rc $?"
timeout 60 /tmp/pp2 > $R/pp2.log 2>&1; echo "pp2 rc $?"; cat $R/pp2.log
for i in 1 2 3; do
  timeout 90 $B run $S/p/latd.cu --backend cuda/forward --arg 300 --arg 10 --params 60 > $R/latd-fwd-$i.log 2>&1; echo "fwd $i rc $?"; grep params $R/latd-fwd-$i.log
done
for i in 1 2; do
  timeout 90 $B run $S/p/latd.cu --backend cuda/mailbox --arg 300 --arg 10 --params 60 > $R/latd-mbx-$i.log 2>&1; echo "mbx $i rc $?"; grep params $R/latd-mbx-$i.log
done
timeout 60 /tmp/pp2 > $R/pp2b.log 2>&1; echo "pp2b rc $?"; cat $R/pp2b.log
# the same pause built into the library's wait (gpuio-x: x-first-poll.patch), bench latency
n=0
for v in 0 300 500 0 300 500; do n=$((n+1))
  if [ $v = 0 ]; then D=""; else D="GPUIO_X_FIRST_NS=${v}u GPUIO_X_FLOOR_FIRST_NS=${v}u"; fi
  GPUIO_X_DEFINES="$D" timeout 100 $S/h/gpuio-x bench --backend cuda/forward --only latency --repeats 3 --json > $R/xlat-$n-$v.json 2> $R/xlat-$n-$v.err; echo "xlat $v rc $?"
  grep -E "one NOP|NOP latency p50" $R/xlat-$n-$v.err | cut -c1-200
done
# whole-device NOPs (132 x 1024 threads, 16 each, default channel) with and without the pause
for v in 0 400 0 400; do n=$((n+1))
  if [ $v = 0 ]; then D=""; else D="GPUIO_X_FIRST_NS=${v}u"; fi
  GPUIO_X_DEFINES="$D" timeout 60 $S/h/gpuio-x run $S/p/nops.cu --backend cuda/forward --grid 132 --block 1024 --arg 16 --arg 0 --arg 0xffffffffffffffff --arg 0 > $R/nops-$n-$v.log 2>&1; echo "nops $v rc $?"
  grep params $R/nops-$n-$v.log | python3 -c "import sys,re; p=[int(x) for x in re.findall(r'\d+',sys.stdin.read())]; print('  M NOPs/s', round(132*1024*16/((p[3]-p[2])/1e9)/1e6,1), 'failed', p[1])"
done
(cd $OUT && tar czf r.tgz r)
