#!/bin/bash
# Session 2026-11-28c, call 3: a waiter's eager polls (GPUIO_WAIT_EAGER 2 = eae7c1a, 3, 4):
# one thread's latency on every CUDA pair, and the whole device's small ops on forward.
S=./.gpucheck/m3
mkdir -p /tmp/gc; export XDG_CACHE_HOME=/tmp/gc
R=$OUT/r; mkdir -p $R
pack() { (cd $OUT && tar czf r.tgz r); }
nvidia-smi --query-gpu=name,driver_version,pcie.link.gen.current,pcie.link.width.current --format=csv > $R/gpu.txt
lat() { # name binary
  local t0=$(date +%s)
  timeout 100 $S/gpuio-$2 bench --only latency --backend cuda > $R/lat-$1.log 2>&1
  echo "== lat $1 rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
  sed 's/\x1b\[[0-9;]*m//g' $R/lat-$1.log | grep -E "NOP latency p50|pwrite latency p50|one NOP" >> $R/summary.txt
}
lat e2a e2; lat e3a e3; lat e4a e4; lat e2b e2; lat e3b e3; lat e4b e4
pack
rq() { # name, binary
  local t0=$(date +%s)
  timeout 120 $S/gpuio-$2 bench --only requests --backend cuda/forward --repeats 2 > $R/rq-$1.log 2>&1
  echo "== rq $1 rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
  sed 's/\x1b\[[0-9;]*m//g' $R/rq-$1.log | grep -E "NOPs|small ops|whole device" | head -12 >> $R/summary.txt
}
rq e4 e4; rq e2 e2; rq e3 e3
pack
cat $R/summary.txt
