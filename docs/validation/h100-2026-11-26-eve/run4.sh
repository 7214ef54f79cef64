#!/bin/bash
# Session 2026-11-26 evening, call 4: (a) host memory bandwidth alone and beside
# the GPU's reads of pinned memory (membw.cu); (b) the queue to the host with 8 and
# 16 rings/drain threads (H = 3e01e45); (c) whole-device requests, H against main
# (ff36e48), forward and mailbox; (d) a user kernel of NOPs, H against main.
S=./.gpucheck/m
mkdir -p /tmp/gc && cp -r .gpucheck/gc/gcache /tmp/gc/ 2>/dev/null
export XDG_CACHE_HOME=/tmp/gc/gcache
R=$OUT/r; mkdir -p $R
pack() { (cd $OUT && tar czf r.tgz r); }
t0=$(date +%s)
nvcc -O3 -arch=sm_90 -o /tmp/membw .gpucheck/k/membw.cu > $R/membw.log 2>&1 && timeout 120 /tmp/membw >> $R/membw.log 2>&1
echo "== membw rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt; cat $R/membw.log >> $R/summary.txt; pack
i=0
q() { # name rings binary
  i=$((i+1)); t0=$(date +%s)
  GPUIO_BENCH_QUEUE_SIZES=64 GPUIO_BENCH_QUEUE_RINGS=$2 timeout 120 $S/$3 bench --only queues --backend cuda --repeats 1 > $R/q$i-$1.log 2>&1
  echo "== q$i $1 (rings $2, $3) rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
  grep -E "64 B: .* M msg/s|queue to (host|device), 64" $R/q$i-$1.log >> $R/summary.txt
  pack
}
q H-r8 8 gpuio-H
q H-r16 16 gpuio-H
q H-r12 12 gpuio-H
q H-r16b 16 gpuio-H
j=0
req() { # name pair binary
  j=$((j+1)); t0=$(date +%s)
  timeout 150 $S/$3 bench --only requests --backend $2 --repeats 1 > $R/req$j-$1.log 2>&1
  echo "== req$j $1 ($2, $3) rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
  grep -E "NOPs|64 B pread|4 KiB pread|1 MiB" $R/req$j-$1.log | grep -v 'one host thread' >> $R/summary.txt
  pack
}
req fwd-H cuda/forward gpuio-H
req fwd-main cuda/forward gpuio-main
req mb-H cuda/mailbox gpuio-H
req fwd-H2 cuda/forward gpuio-H
k=0
nops() { # name binary
  k=$((k+1)); t0=$(date +%s)
  timeout 90 $S/$2 run --backend cuda/forward --grid 132 --block 1024 --arg 4 --arg 0 .gpucheck/k/nops.cu > $R/nops$k-$1.log 2>&1
  echo "== nops$k $1 ($2) rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
  grep -E -i "finished in|requests|NOP|M/s" $R/nops$k-$1.log | head -5 >> $R/summary.txt
  pack
}
nops H gpuio-H; nops main gpuio-main; nops H gpuio-H; nops main gpuio-main
(cd /tmp/gc && tar czf $OUT/gcache.tgz gcache)
pack
cat $R/summary.txt
