#!/bin/bash
# Session 2026-11-26 (late night), call 1: lat.cu (primitives, forward steps with
# gpuio's header, queue send variants without a host), then the bench's 64 B queue
# to the host with other ring capacities.
S=./.gpucheck/m
mkdir -p /tmp/gc && cp -r .gpucheck/gc/gcache /tmp/gc/ 2>/dev/null
rm -f /tmp/gc/gcache/calibration.json /tmp/gc/gcache/gpuio/calibration.json
export XDG_CACHE_HOME=/tmp/gc/gcache
R=$OUT/r; mkdir -p $R
pack() { (cd $OUT && tar czf r.tgz r); }
nvidia-smi --query-gpu=name,driver_version,pcie.link.gen.current,pcie.link.width.current --format=csv > $R/gpu.txt 2>&1
t0=$(date +%s)
nvcc -O3 -std=c++17 -arch=sm_90 -I device/include -I device/kernels -o /tmp/lat .gpucheck/k/lat.cu > $R/lat-build.log 2>&1
echo "== lat build rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
timeout 150 /tmp/lat > $R/lat.log 2>&1
echo "== lat run rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
pack
q() { # name, env...
  local n=$1; shift; local t0=$(date +%s)
  env GPUIO_BENCH_QUEUE_SIZES=64 "$@" timeout 240 $S/gpuio-main bench --only queues --backend cuda --repeats 1 > $R/q-$n.log 2>&1
  echo "== q $n ($*) rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
  grep -E "queue to host, .* messages|M msg/s; kernel|copy-back" $R/q-$n.log | head -6 >> $R/summary.txt
}
q cap4096a
pack
q cap16384 GPUIO_BENCH_QUEUE_CAPACITY=16384
q cap1024 GPUIO_BENCH_QUEUE_CAPACITY=1024
q cap4096b
q cap65536 GPUIO_BENCH_QUEUE_CAPACITY=65536
(cd /tmp/gc && tar czf $OUT/gcache.tgz gcache)
pack
cat $R/summary.txt $R/lat-build.log | head -80; cat $R/lat.log
