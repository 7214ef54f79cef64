#!/bin/bash
# run 60 (H100): mailbox makes runs of pwrites as one pwritev (gpuio-mbr) vs 71e81a2 (gpuio-head).
set -u
R=$OUT/r; mkdir -p $R /tmp/gc/gcache
[ -d .gpucheck/gc/gcache ] && cp -r .gpucheck/gc/gcache/. /tmp/gc/gcache/
export XDG_CACHE_HOME=/tmp/gc/gcache
B=.gpucheck/m60
chmod +x $B/*
finish() { (cd $OUT && tar czf r.tgz r); }
timeout 130 $B/gpuio-mbr selftest --backend cuda > $R/selftest-mbr.log 2>&1; echo "selftest rc $?" >> $R/selftest-mbr.log
finish
for b in mbr head mbr; do
  timeout 75 $B/gpuio-$b bench --only requests --backend cuda/mailbox --repeats 1 > $R/req-$b-$SECONDS.log 2>&1
  finish
done
