#!/bin/bash
# Session 2026-11-26 evening, call 13: direct's bulk figures with the bench's bulk
# channel at 256 slots (D256: the working tree after a6fd20b) against 512 (final2 =
# a6fd20b, whose 1024 do not open on direct), alternating.
S=./.gpucheck/m
mkdir -p /tmp/gc && cp -r .gpucheck/gc/gcache /tmp/gc/ 2>/dev/null
rm -f /tmp/gc/gcache/calibration.json
export XDG_CACHE_HOME=/tmp/gc/gcache
R=$OUT/r; mkdir -p $R
i=0
req() { # name binary
  i=$((i+1)); t0=$(date +%s)
  timeout 150 $S/$2 bench --only requests --backend cuda/direct --repeats 1 > $R/req$i-$1.log 2>&1
  echo "== req$i $1 ($2) rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
  grep -E ": 1 MiB|channel of|io_uring, 8" $R/req$i-$1.log | grep -v pwrite >> $R/summary.txt
}
req d256 gpuio-D256
req d512 gpuio-final2
req d256b gpuio-D256
req d512b gpuio-final2
cat $R/summary.txt
