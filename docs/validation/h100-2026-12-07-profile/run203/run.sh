#!/bin/bash
# run 203: gpuio = HEAD 5179e6f (code de1a6f9); gpuio-r = + a waiting lane's later turn looks relaxed (acquire only on the first and on finding FREE).
# selftest (r); 1 MiB bulk reads/writes base vs r interleaved (direct, forward); whole-device NOPs; one-thread latency.
R=$OUT/r; mkdir -p $R; export XDG_CACHE_HOME=/tmp/gc
S=.gpucheck/s16; B=$S/h/gpuio; N=$S/h/gpuio-r
nvidia-smi -q | grep -i -E "Product Name|Driver Version" | head -3 > $R/gpu.txt; uname -r > $R/uname.txt; date -u >> $R/uname.txt
timeout 110 $N selftest --backend cuda > $R/selftest.log 2>&1; echo "selftest rc $?"; tail -1 $R/selftest.log | cut -c1-200
n=0
for t in direct forward direct forward; do for b in b r; do n=$((n+1)); Y=$N; [ $b = b ] && Y=$B
  timeout 100 $Y bench --backend cuda/$t --only bulk --repeats 1 --json > $R/bulk-$n-$t-$b.json 2> $R/bulk-$n-$t-$b.err; echo "bulk $t $b rc $? $(date +%T)"
  sed 's/\x1b\[[0-9;]*m//g' $R/bulk-$n-$t-$b.err | grep -E "^  $t: 1 MiB p(read|write)(, whole device, one file  | into the staging area.*one file  )" | cut -c1-110
done; done
for b in b r b r; do n=$((n+1)); Y=$N; [ $b = b ] && Y=$B
  timeout 25 $Y run docs/validation/h100-2026-12-06-polls/nops.cu --backend cuda/forward --grid 132 --block 1024 --arg 16 --arg 0 --arg 0xffffffffffffffff --arg 0 > $R/nops-$n-$b.log 2>&1; echo -n "nops $b rc $? "
  grep params $R/nops-$n-$b.log | python3 -c "import sys,re; p=[int(x) for x in re.findall(r'\d+',sys.stdin.read())]; print('M NOPs/s', round(132*1024*16/((p[3]-p[2])/1e9)/1e6,1), 'failed', p[1])"
done
for b in b r b r; do n=$((n+1)); Y=$N; [ $b = b ] && Y=$B
  timeout 40 $Y bench --backend cuda --only latency --repeats 3 --json > $R/lat-$n-$b.json 2> $R/lat-$n-$b.err; echo "lat $b rc $?"
  sed 's/\x1b\[[0-9;]*m//g' $R/lat-$n-$b.err | grep -E "(forward|mailbox|direct): NOP latency p50" | cut -c3-150
done
(cd $OUT && tar czf r.tgz r)
