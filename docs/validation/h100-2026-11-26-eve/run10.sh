#!/bin/bash
# Session 2026-11-26 evening, call 10: N = forward rings follow the slots (one per 64,
# up to 16) and the bench's bulk channel of 1024 slots: the request figures on every
# CUDA pair, forward twice.
S=./.gpucheck/m
mkdir -p /tmp/gc && cp -r .gpucheck/gc/gcache /tmp/gc/ 2>/dev/null
rm -f /tmp/gc/gcache/calibration.json
export XDG_CACHE_HOME=/tmp/gc/gcache
R=$OUT/r; mkdir -p $R
pack() { (cd $OUT && tar czf r.tgz r); }
i=0
req() { # name pair
  i=$((i+1)); t0=$(date +%s)
  timeout 150 $S/gpuio-N bench --only requests --backend $2 --repeats 1 > $R/req$i-$1.log 2>&1
  echo "== req$i $1 ($2) rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
  grep -E ": 1 MiB|NOPs, whole|write\+read|channel of" $R/req$i-$1.log >> $R/summary.txt
  pack
}
req fwd cuda/forward
req mb cuda/mailbox
req direct cuda/direct
req fwd2 cuda/forward
cat $R/summary.txt
