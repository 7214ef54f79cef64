#!/bin/bash
# Session 2026-11-26 evening, call 11: the mailbox's bulk reads with 1024 ports and 4
# / 16 server threads (GPUIO_MAILBOX_THREADS), binary N.
S=./.gpucheck/m
mkdir -p /tmp/gc && cp -r .gpucheck/gc/gcache /tmp/gc/ 2>/dev/null
rm -f /tmp/gc/gcache/calibration.json
export XDG_CACHE_HOME=/tmp/gc/gcache
R=$OUT/r; mkdir -p $R
i=0
req() { # name threads
  i=$((i+1)); t0=$(date +%s)
  GPUIO_MAILBOX_THREADS=$2 timeout 150 $S/gpuio-N bench --only requests --backend cuda/mailbox --repeats 1 > $R/req$i-$1.log 2>&1
  echo "== req$i $1 (mailbox threads $2) rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
  grep -E ": 1 MiB|NOPs, whole|write\+read" $R/req$i-$1.log >> $R/summary.txt
}
req t16 16
req t4 4
req t16b 16
cat $R/summary.txt
