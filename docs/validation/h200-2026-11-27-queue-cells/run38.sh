#!/bin/bash
# Session 2026-11-27c, call 3: 4 KiB messages to the host in gpuio's bench, ring capacity.
S=./.gpucheck/m
mkdir -p /tmp/gc/gcache; cp -r .gpucheck/gc/gcache/. /tmp/gc/gcache/
export XDG_CACHE_HOME=/tmp/gc/gcache
R=$OUT/r; mkdir -p $R
pack() { (cd $OUT && tar czf r.tgz r); }
export GPUIO_BENCH_QUEUE_SIZES=4096
for c in 512 2048 8192 1024 4096 512; do
  t0=$(date +%s)
  GPUIO_BENCH_QUEUE_CAPACITY=$c timeout 100 $S/gpuio-head bench --only queues --backend cuda --repeats 2 > $R/q4k-c$c.log 2>&1
  echo "== capacity $c rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
  grep -E "^gpuio bench:   4096 B:|queue to host, 4096 B messages" $R/q4k-c$c.log >> $R/summary.txt
  pack
done
t0=$(date +%s)
GPUIO_BENCH_QUEUE_RINGS=32 timeout 100 $S/gpuio-head bench --only queues --backend cuda --repeats 2 > $R/q4k-r32.log 2>&1
echo "== 32 rings x 512 rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
grep -E "^gpuio bench:   4096 B:|queue to host, 4096 B messages" $R/q4k-r32.log >> $R/summary.txt
pack
cat $R/summary.txt
