#!/bin/bash
# run 65 (H100): forward preads of one file end to end as one READV (gpuio-readv) vs c00a766's logic (gpuio-inline, the 8f6ad4d build), interleaved.
set -u
R=$OUT/r; mkdir -p $R /tmp/gc/gcache
[ -d .gpucheck/gc/gcache ] && cp -r .gpucheck/gc/gcache/. /tmp/gc/gcache/
export XDG_CACHE_HOME=/tmp/gc/gcache
B=.gpucheck/m65
chmod +x $B/*
finish() { (cd $OUT && tar czf r.tgz r); }
T0=$(date +%s)
timeout 100 $B/gpuio-readv selftest --backend cuda > $R/selftest-readv.log 2>&1; echo "selftest rc $?" >> $R/selftest-readv.log
finish
for i in 1 2 3; do
  for b in readv inline; do
    left=$(( 570 - ($(date +%s)-T0) ))
    [ $left -lt 45 ] && break 2
    GPUIO_LOG=gpuio_core::forward=debug timeout $left $B/gpuio-$b bench --only requests --backend cuda/forward --repeats 1 > $R/req-$b-$i.log 2>&1
    finish
  done
done
