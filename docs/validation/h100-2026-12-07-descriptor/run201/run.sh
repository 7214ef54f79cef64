#!/bin/bash
# run 201: gpuio = de1a6f9 + the call's descriptor words read with its checks (one
# trip to L2); gpuio-base = de1a6f9; gpuio-x = gpuio + NVRTC -D from GPUIO_X_DEFINES.
# selftest (new); latency interleaved base/new x3; the first-poll pause 350/600/900
# twice (x); whole-device NOPs base/new.
R=$OUT/r; mkdir -p $R; export XDG_CACHE_HOME=/tmp/gc
S=.gpucheck/s15; N=$S/h/gpuio; B=$S/h/gpuio-base; X=$S/h/gpuio-x
nvidia-smi -q | grep -i -E "Product Name|Driver Version|Link Width|Link Gen" | head -8 > $R/gpu.txt; uname -r > $R/uname.txt
timeout 110 $N selftest --backend cuda > $R/selftest.log 2>&1; echo "selftest rc $?"; tail -2 $R/selftest.log | cut -c1-300
n=0
for b in b n b n b n; do n=$((n+1)); Y=$N; [ $b = b ] && Y=$B
  timeout 40 $Y bench --backend cuda --only latency --repeats 3 --json > $R/lat-$n-$b.json 2> $R/lat-$n-$b.err; echo "lat $b rc $?"
  grep -E "(forward|mailbox|direct): NOP latency p50|forward: 64 B pwrite latency p50|forward: one NOP" $R/lat-$n-$b.err | cut -c14-200
done
for v in 350 600 900 350 600 900; do n=$((n+1))
  GPUIO_X_DEFINES="GPUIO_FIRST_POLL_NS=${v}u" timeout 40 $X bench --backend cuda --only latency --repeats 3 --json > $R/lat-$n-x$v.json 2> $R/lat-$n-x$v.err; echo "lat x$v rc $?"
  grep -E "(forward|mailbox): NOP latency p50|forward: one NOP" $R/lat-$n-x$v.err | cut -c14-200
done
for b in b n b n; do n=$((n+1)); Y=$N; [ $b = b ] && Y=$B
  timeout 25 $Y run $S/p/nops.cu --backend cuda/forward --grid 132 --block 1024 --arg 16 --arg 0 --arg 0xffffffffffffffff --arg 0 > $R/nops-$n-$b.log 2>&1; echo -n "nops $b rc $? "
  grep params $R/nops-$n-$b.log | python3 -c "import sys,re; p=[int(x) for x in re.findall(r'\d+',sys.stdin.read())]; print('M NOPs/s', round(132*1024*16/((p[3]-p[2])/1e9)/1e6,1), 'failed', p[1])"
done
(cd $OUT && tar czf r.tgz r)
