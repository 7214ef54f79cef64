#!/bin/bash
# run 69 (H100): 89f4ad0 (main's HEAD of this stop): selftest, forward and mailbox requests.
set -u
R=$OUT/r; mkdir -p $R /tmp/gc/gcache
[ -d .gpucheck/gc/gcache ] && cp -r .gpucheck/gc/gcache/. /tmp/gc/gcache/
export XDG_CACHE_HOME=/tmp/gc/gcache
B=.gpucheck/m69
chmod +x $B/*
finish() { (cd $OUT && tar czf r.tgz r); }
timeout 100 $B/gpuio-head selftest --backend cuda > $R/selftest.log 2>&1; echo "selftest rc $?" >> $R/selftest.log
finish
for t in forward mailbox; do
  timeout 60 $B/gpuio-head bench --only requests --backend cuda/$t --repeats 1 > $R/req-$t.log 2>&1
  finish
done
