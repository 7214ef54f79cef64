#!/bin/bash
# Next stop, call 1: (a) the two fills without a host (nvcc probe); (b) queue-rounds
# (ea078a5) against main (c749141 = c5699ff's header) in gpuio bench, interleaved,
# with a selftest of the rounds build (cold NVRTC compile of both: ~170 s each).
S=./.gpucheck/m
T0=$(date +%s)
mkdir -p /tmp/gc/gcache; cp -r .gpucheck/gc/gcache/. /tmp/gc/gcache/ 2>/dev/null
export XDG_CACHE_HOME=/tmp/gc/gcache
R=$OUT/r; mkdir -p $R
pack() { (cd $OUT && tar czf r.tgz r); tar czf $OUT/gcache.tgz -C /tmp/gc gcache; }
nvcc -O3 -arch=sm_90 -o /tmp/tr run42-tr.cu > $R/build.log 2>&1; echo build rc=$? >> $R/build.log
timeout 40 /tmp/tr > $R/tr.txt 2>&1; echo "rc=$?" >> $R/tr.txt
cat $R/build.log $R/tr.txt >> $R/summary.txt
pack
timeout 300 $S/gpuio-rounds selftest --backend cuda > $R/selftest-rounds.log 2>&1
echo "== selftest rounds (cold) rc=$? $(( $(date +%s)-T0 )) s" >> $R/summary.txt
tail -1 $R/selftest-rounds.log >> $R/summary.txt
pack
export GPUIO_BENCH_QUEUE_SIZES=64,256
for b in main rounds main rounds; do
  left=$(( T0 + 570 - $(date +%s) )); [ $left -lt 40 ] && break
  t0=$(date +%s)
  timeout $left $S/gpuio-$b bench --only queues --backend cuda --repeats 3 > $R/q-$b-$t0.log 2>&1
  echo "== queues $b rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
  grep -E "^  queue to host, .* messages" $R/q-$b-$t0.log >> $R/summary.txt
  pack
done
cat $R/summary.txt
