#!/bin/bash
# Session 2026-11-27, call 3: the landed build (fin: forward and mailbox answers in one
# read, the turn without a fence): selftest; one thread's round trips on every CUDA
# transport, interleaved with 8b42fe8 (8b4).
S=./.gpucheck/m
mkdir -p /tmp/gc && cp -r .gpucheck/gc/gcache /tmp/gc/ 2>/dev/null
rm -f /tmp/gc/gcache/calibration.json /tmp/gc/gcache/gpuio/calibration.json
export XDG_CACHE_HOME=/tmp/gc/gcache
R=$OUT/r; mkdir -p $R
pack() { (cd $OUT && tar czf r.tgz r && tar czf gcache.tgz -C /tmp/gc gcache); }
t0=$(date +%s)
timeout 300 $S/gpuio-fin selftest --backend cuda > $R/selftest.log 2>&1
echo "== selftest fin cuda rc=$? $(( $(date +%s)-t0 )) s; $(grep -c '^ok' $R/selftest.log) ok, $(grep -c '^FAIL' $R/selftest.log) failed" >> $R/summary.txt
grep "^FAIL" $R/selftest.log | cut -c1-300 >> $R/summary.txt
pack
lat() { # name, binary
  local t0=$(date +%s)
  timeout 60 $S/gpuio-$2 bench --only latency --backend cuda > $R/lat-$1.log 2>&1
  echo "== lat $1 rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
  grep -E "NOP latency p50|one NOP" $R/lat-$1.log >> $R/summary.txt
}
lat fin1 fin; lat old1 8b4; lat fin2 fin; lat old2 8b4
pack
cat $R/summary.txt
