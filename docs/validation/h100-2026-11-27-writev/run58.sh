#!/bin/bash
# run 58 (H100): forward's descriptor words loaded with the channel check (gpuio-fw) vs 528cade (gpuio-head).
set -u
R=$OUT/r; mkdir -p $R /tmp/gc/gcache
[ -d .gpucheck/gc/gcache ] && cp -r .gpucheck/gc/gcache/. /tmp/gc/gcache/
export XDG_CACHE_HOME=/tmp/gc/gcache
B=.gpucheck/m58
chmod +x $B/*
stamp() { while IFS= read -r l; do echo "$(date +%T.%N | cut -c1-12) $l"; done; }
finish() { (cd $OUT && tar czf r.tgz r); tar czf $OUT/gcache.tgz -C /tmp/gc gcache; }
timeout 330 $B/gpuio-fw bench --only latency --repeats 1 > $R/lat-fw-0.log 2>&1
timeout 150 $B/gpuio-fw selftest --backend cuda > $R/selftest-fw.log 2>&1; echo "selftest rc $?" >> $R/selftest-fw.log
for i in 1 2 3; do
  for b in head fw; do
    timeout 40 $B/gpuio-$b bench --only latency --repeats 1 > $R/lat-$b-$i.log 2>&1
  done
done
finish
for b in fw head; do
  timeout 60 $B/gpuio-$b bench --only requests --backend cuda/forward --repeats 1 2>&1 | stamp > $R/req-$b.log
  finish
done
