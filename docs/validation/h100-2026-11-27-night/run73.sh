#!/bin/bash
# run 73 (H100): mailbox server threads make held preads once 64 KiB are held (cap)
# against 50bf2e8 (trip): mailbox requests interleaved x3.
set -u
R=$OUT/r; mkdir -p $R /tmp/gc/gcache
[ -d .gpucheck/gc/gcache ] && cp -r .gpucheck/gc/gcache/. /tmp/gc/gcache/
export XDG_CACHE_HOME=/tmp/gc/gcache
B=.gpucheck/m73
chmod +x $B/*
finish() { (cd $OUT && tar czf r.tgz r); }
for i in 1 2 3; do
  for b in cap trip; do
    timeout 70 $B/gpuio-$b bench --only requests --backend cuda/mailbox --repeats 1 > $R/req-mailbox-$b-$i.log 2>&1
    finish
  done
done
