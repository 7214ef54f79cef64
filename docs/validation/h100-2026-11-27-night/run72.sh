#!/bin/bash
# run 72 (H100): ABI 12 (the check's trip carries forward's words) against 89f4ad0,
# warm NVRTC cache for both: selftest, then forward requests interleaved x3, mailbox x1.
set -u
R=$OUT/r; mkdir -p $R /tmp/gc/gcache
[ -d .gpucheck/gc/gcache ] && cp -r .gpucheck/gc/gcache/. /tmp/gc/gcache/
export XDG_CACHE_HOME=/tmp/gc/gcache
B=.gpucheck/m71
chmod +x $B/*
finish() { (cd $OUT && tar czf r.tgz r); }
( time timeout 150 $B/gpuio-trip selftest --backend cuda ) > $R/selftest-trip.log 2>&1; echo "selftest rc $?" >> $R/selftest-trip.log
finish
for i in 1 2 3; do
  for b in trip head; do
    timeout 70 $B/gpuio-$b bench --only requests --backend cuda/forward --repeats 1 > $R/req-forward-$b-$i.log 2>&1
    finish
  done
done
for b in head trip; do
  timeout 70 $B/gpuio-$b bench --only requests --backend cuda/mailbox --repeats 1 > $R/req-mailbox-$b-1.log 2>&1
  finish
done
