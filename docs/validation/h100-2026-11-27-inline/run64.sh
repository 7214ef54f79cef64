#!/bin/bash
# run 64 (H100): forward requests, 8f6ad4d (gpuio-here) and 20c7b8d (gpuio-head) interleaved, three pairs.
set -u
R=$OUT/r; mkdir -p $R /tmp/gc/gcache
[ -d .gpucheck/gc/gcache ] && cp -r .gpucheck/gc/gcache/. /tmp/gc/gcache/
export XDG_CACHE_HOME=/tmp/gc/gcache
B=.gpucheck/m63
chmod +x $B/*
finish() { (cd $OUT && tar czf r.tgz r); }
T0=$(date +%s)
for i in 4 5 6; do
  for b in head here; do
    left=$(( 560 - ($(date +%s)-T0) ))
    [ $left -lt 45 ] && break 2
    timeout $left $B/gpuio-$b bench --only requests --backend cuda/forward --repeats 1 > $R/req-$b-$i.log 2>&1
    finish
  done
done
