#!/bin/bash
# Session 2026-11-27, call 6: whole-device NOPs with 16 a thread (long) against 4 a
# thread (fin2 = 181c339), forward, interleaved.
S=./.gpucheck/m
mkdir -p /tmp/gc && cp -r .gpucheck/gc/gcache /tmp/gc/ 2>/dev/null
rm -f /tmp/gc/gcache/calibration.json /tmp/gc/gcache/gpuio/calibration.json
export XDG_CACHE_HOME=/tmp/gc/gcache
R=$OUT/r; mkdir -p $R
pack() { (cd $OUT && tar czf r.tgz r); }
rq() { # name, binary
  local t0=$(date +%s)
  timeout 250 $S/gpuio-$2 bench --only requests --backend cuda/forward --repeats 3 > $R/rq-$1.log 2>&1
  echo "== rq $1 rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
  grep -E -A1 "NOPs, whole" $R/rq-$1.log | head -4 >> $R/summary.txt
}
rq long1 long
pack
rq fin2 fin2
pack
rq long2 long
pack
cat $R/summary.txt
