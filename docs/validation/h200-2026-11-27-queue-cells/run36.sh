#!/bin/bash
# Session 2026-11-27c, call 1: NUMA placement and the two modes of a round trip;
# the landed header (57edf2a): latency, host queues against the bus.
S=./.gpucheck/m
T0=$(date +%s)
mkdir -p /tmp/gc/gcache
export XDG_CACHE_HOME=/tmp/gc/gcache
R=$OUT/r; mkdir -p $R
pack() { (cd $OUT && tar czf r.tgz r); tar czf $OUT/gcache.tgz -C /tmp/gc gcache; }
nvidia-smi --query-gpu=name,driver_version,pcie.link.gen.current,pcie.link.width.current --format=csv > $R/gpu.txt
(numactl -H; lscpu; nvidia-smi topo -m; cat /proc/cmdline; uname -a) > $R/topo.txt 2>&1
nvcc -O3 -arch=sm_90 -o /tmp/numa .gpucheck/probe/numa.cu -lpthread > $R/build.log 2>&1; echo build rc=$? >> $R/build.log
timeout 120 /tmp/numa > $R/numa.txt 2>&1
echo "== numa rc=$? $(( $(date +%s)-T0 )) s" >> $R/summary.txt
pack
t0=$(date +%s)
timeout 260 $S/gpuio-head bench --only latency --backend cuda > $R/lat-head.log 2>&1
echo "== lat head (cold compile) rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
grep -E "latency p50|one NOP|floor" $R/lat-head.log >> $R/summary.txt
pack
left=$(( T0 + 560 - $(date +%s) ))
t0=$(date +%s)
timeout $left $S/gpuio-head bench --only queues --backend cuda --repeats 3 > $R/q-head.log 2>&1
echo "== queues head rc=$? $(( $(date +%s)-t0 )) s (limit $left)" >> $R/summary.txt
pack
cat $R/summary.txt
