#!/bin/bash
# Session 2026-11-27c, call 4: the bench's 4 KiB cells (gpuio-cells) on its queues;
# whole-device forward NOPs against the channel's slots (forwarder rings).
S=./.gpucheck/m
T0=$(date +%s)
mkdir -p /tmp/gc/gcache; cp -r .gpucheck/gc/gcache/. /tmp/gc/gcache/
export XDG_CACHE_HOME=/tmp/gc/gcache
R=$OUT/r; mkdir -p $R
pack() { (cd $OUT && tar czf r.tgz r); }
t0=$(date +%s)
timeout 150 $S/gpuio-cells bench --only queues --backend cuda --repeats 3 > $R/q-cells.log 2>&1
echo "== queues cells rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
grep -E "^  queue to host, .* messages|copy ceiling" $R/q-cells.log >> $R/summary.txt
pack
n() { t0=$(date +%s)
  timeout 90 $S/gpuio-cells run .gpucheck/k/nops.cu --backend cuda/forward --grid 132 --block 1024 --slots $2 --arg 16 --arg 0 > $R/n-$1.log 2>&1
  echo "== nops $1 (slots $2) rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
  grep -E "finished in|channel:" $R/n-$1.log >> $R/summary.txt; pack; }
n a256 256; n a1024 1024; n a512 512; n b256 256; n b1024 1024; n b512 512; n c256 256; n c1024 1024
cat $R/summary.txt
