#!/bin/bash
# run 66 (H100): mailbox preads of regular files end to end as one preadv (gpuio-mbread) vs ceb7f5e (gpuio-readv), interleaved.
set -u
R=$OUT/r; mkdir -p $R /tmp/gc/gcache
[ -d .gpucheck/gc/gcache ] && cp -r .gpucheck/gc/gcache/. /tmp/gc/gcache/
export XDG_CACHE_HOME=/tmp/gc/gcache
B=.gpucheck/m66
chmod +x $B/*
finish() { (cd $OUT && tar czf r.tgz r); }
T0=$(date +%s)
timeout 100 $B/gpuio-mbread selftest --backend cuda > $R/selftest-mbread.log 2>&1; echo "selftest rc $?" >> $R/selftest-mbread.log
finish
for i in 1 2 3; do
  for b in mbread readv; do
    left=$(( 570 - ($(date +%s)-T0) ))
    [ $left -lt 45 ] && break 2
    timeout $left $B/gpuio-$b bench --only requests --backend cuda/mailbox --repeats 1 > $R/req-$b-$i.log 2>&1
    finish
  done
done
