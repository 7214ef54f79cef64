#!/bin/bash
# run 200: w = c616dcb + forward requests as marked words, READY relaxed (a release
# fence first unless a NOP). steps2 probe (v0-v3), selftest w, latency interleaved
# h (609459a) / t (run 199's, take by load) / w, whole-device NOPs, whole bench w.
R=$OUT/r; mkdir -p $R; export XDG_CACHE_HOME=/tmp/gc
S=.gpucheck/s14; W=$S/h/gpuio-w
nvidia-smi -q | grep -i -E "Product Name|Driver Version" | head -4 > $R/gpu.txt; uname -r > $R/uname.txt
for i in 1; do timeout 60 $W run $S/p/steps2.cu --backend cuda/forward --grid 1 --block 32 --arg 1000 --params 96 > $R/steps2-$i.log 2>&1; echo "steps2 rc $?"; grep -E "params|error" $R/steps2-$i.log | head -5 | cut -c1-700; done
timeout 110 $W selftest --backend cuda > $R/selftest-w.log 2>&1; echo "selftest w rc $?"; tail -1 $R/selftest-w.log
n=0
for b in w t; do n=$((n+1)); X=$S/h/gpuio-$b; [ $b = h ] && X=$S/h/gpuio
  timeout 40 $X bench --only latency --repeats 3 --json > $R/lat-$n-$b.json 2> $R/lat-$n-$b.err; echo "lat $b rc $?"
  grep -E "^  (forward|mailbox): (NOP|64 B pwrite) latency p50" $R/lat-$n-$b.err | cut -c1-150
done
for b in w; do X=$S/h/gpuio-$b; timeout 25 $X run $S/nops.cu --backend cuda/forward --grid 132 --block 1024 --arg 16 --arg 0 --arg 0xffffffffffffffff --arg 0 > $R/nops-$b.log 2>&1; echo -n "nops $b rc $? "
grep params $R/nops-$b.log | python3 -c "import sys,re; p=[int(x) for x in re.findall(r'\d+',sys.stdin.read())]; print('M NOPs/s', round(132*1024*16/((p[3]-p[2])/1e9)/1e6,1), 'failed', p[1])"; done
(cd $OUT && tar czf r.tgz r)
