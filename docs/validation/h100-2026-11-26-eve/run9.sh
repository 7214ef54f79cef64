#!/bin/bash
# Session 2026-11-26 evening, call 9: the bench's bulk figures (forward) with its
# channel of 256 slots / 4 rings (S = 95674b3) against 1024 slots / 16 rings
# (B1024 = S with bulk::SLOTS = 1024, GPUIO_FORWARD_RINGS=16), alternating.
S=./.gpucheck/m
mkdir -p /tmp/gc && cp -r .gpucheck/gc/gcache /tmp/gc/ 2>/dev/null
rm -f /tmp/gc/gcache/calibration.json
export XDG_CACHE_HOME=/tmp/gc/gcache
R=$OUT/r; mkdir -p $R
pack() { (cd $OUT && tar czf r.tgz r); }
i=0
req() { # name binary env
  i=$((i+1)); t0=$(date +%s)
  env $3 timeout 120 $S/$2 bench --only requests --backend cuda/forward --repeats 1 > $R/req$i-$1.log 2>&1
  echo "== req$i $1 ($2, $3) rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
  grep -E "forward: 1 MiB|NOPs, whole" $R/req$i-$1.log >> $R/summary.txt
  pack
}
req s256 gpuio-S X=1
req s1024-r16 gpuio-B1024 GPUIO_FORWARD_RINGS=16
req s256 gpuio-S X=1
req s1024-r16 gpuio-B1024 GPUIO_FORWARD_RINGS=16
req s1024-r4 gpuio-B1024 X=1
cat $R/summary.txt
