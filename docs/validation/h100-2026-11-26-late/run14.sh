#!/bin/bash
# Session 2026-11-26 (late), call 1: what sets the pace of the queue to the host
# (drain threads' busy share; rings, drains, capacity), and whole-device NOPs by slots.
S=./.gpucheck/m
mkdir -p /tmp/gc && cp -r .gpucheck/gc/gcache /tmp/gc/ 2>/dev/null
rm -f /tmp/gc/gcache/calibration.json
export XDG_CACHE_HOME=/tmp/gc/gcache
R=$OUT/r; mkdir -p $R
pack() { (cd $OUT && tar czf r.tgz r); (cd /tmp/gc && tar czf $OUT/gcache.tgz gcache); }
nvidia-smi --query-gpu=name,driver_version,pcie.link.gen.current,pcie.link.width.current --format=csv > $R/machine.txt 2>&1; uname -r >> $R/machine.txt; nproc >> $R/machine.txt
q() { # name, env...
  local n=$1; shift; local t0=$(date +%s)
  env GPUIO_BENCH_QUEUE_SIZES=64 "$@" timeout 120 $S/gpuio-Q bench --only queues --backend cuda --repeats 1 > $R/q-$n.log 2>&1
  echo "== q $n ($*) rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
  grep -E "M msg/s;|copy-back: kernel|queue to host, 64 B messages" $R/q-$n.log >> $R/summary.txt
}
q def
q d8 GPUIO_BENCH_QUEUE_DRAINS=8
q r32d16 GPUIO_BENCH_QUEUE_RINGS=32 GPUIO_BENCH_QUEUE_DRAINS=16
q c16k GPUIO_BENCH_QUEUE_CAPACITY=16384
q r32 GPUIO_BENCH_QUEUE_RINGS=32
q def2
pack
n() { # name, transport, slots, per
  local t0=$(date +%s)
  timeout 120 $S/gpuio-Q run .gpucheck/k/nops.cu --backend cuda/$2 --grid 132 --block 1024 --slots $3 --arg $4 --arg 0 > $R/n-$1.log 2>&1
  echo "== nops $1 ($2 slots $3 per $4) rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
  grep -E "finished in|params:" $R/n-$1.log >> $R/summary.txt
}
n f256 forward 256 16
n f1024 forward 1024 16
n f2048 forward 2048 16
n f256b forward 256 16
n f1024b forward 1024 16
n m256 mailbox 256 16
n m1024 mailbox 1024 16
t0=$(date +%s)
timeout 100 $S/gpuio-Q bench --only latency --backend cuda > $R/lat.log 2>&1
echo "== latency rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
grep -E "^  " $R/lat.log >> $R/summary.txt
pack
cat $R/summary.txt
