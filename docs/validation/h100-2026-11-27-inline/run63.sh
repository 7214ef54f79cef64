#!/bin/bash
# run 63 (H100): the whole bench at 8f6ad4d (gpuio-here), then forward requests interleaved against 20c7b8d (gpuio-head).
set -u
R=$OUT/r; mkdir -p $R /tmp/gc/gcache
[ -d .gpucheck/gc/gcache ] && cp -r .gpucheck/gc/gcache/. /tmp/gc/gcache/
export XDG_CACHE_HOME=/tmp/gc/gcache
B=.gpucheck/m63
chmod +x $B/*
stamp() { while IFS= read -r l; do echo "$(date +%T.%N | cut -c1-12) $l"; done; }
finish() { (cd $OUT && tar czf r.tgz r); }
T0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version --format=csv > $R/gpu.txt 2>&1; uname -r >> $R/gpu.txt
timeout 420 $B/gpuio-here bench --repeats 3 --plot $R/bench.svg > $R/bench.log 2> $R/bench.err
echo "== bench rc=$? $(( $(date +%s)-T0 )) s" >> $R/bench.log
finish
for b in head here; do
  left=$(( 590 - ($(date +%s)-T0) ))
  [ $left -lt 45 ] && break
  timeout $left $B/gpuio-$b bench --only requests --backend cuda/forward --repeats 1 2>&1 | stamp > $R/req-$b-3.log
  finish
done
