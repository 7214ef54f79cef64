#!/bin/bash
# run 71 (H100): the check's trip carries forward's words (ABI 12) against 89f4ad0:
# selftest of the new header (cold NVRTC), then requests interleaved.
set -u
R=$OUT/r; mkdir -p $R /tmp/gc/gcache
[ -d .gpucheck/gc/gcache ] && cp -r .gpucheck/gc/gcache/. /tmp/gc/gcache/
export XDG_CACHE_HOME=/tmp/gc/gcache
B=.gpucheck/m71
chmod +x $B/*
finish() { (cd $OUT && tar czf r.tgz r); }
ls /tmp/gc/gcache/* > $R/cache-before.txt
( time timeout 450 $B/gpuio-trip selftest --backend cuda ) > $R/selftest-trip.log 2>&1; echo "selftest rc $?" >> $R/selftest-trip.log
mkdir -p $OUT/cache; for f in /tmp/gc/gcache/*/*.cubin; do grep -qx "$f" $R/cache-before.txt 2>/dev/null || true; done
ls -la /tmp/gc/gcache/* > $R/cache-after.txt
find /tmp/gc/gcache -name '*.cubin' -newer $R/cache-before.txt -exec cp {} $OUT/cache/ \;
finish
for t in forward; do
  for b in head trip; do
    timeout 70 $B/gpuio-$b bench --only requests --backend cuda/$t --repeats 1 > $R/req-$t-$b-1.log 2>&1
    finish
  done
done
