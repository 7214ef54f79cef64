#!/bin/bash
# Session 2026-11-27b, call 2: the turn's word (one CAS takes) and the transport in the
# check's trip (turn1) against 59dcac3 (base): latency interleaved, selftest, ncu.
S=./.gpucheck/m
mkdir -p /tmp/gc && cp -r .gpucheck/gc/gcache /tmp/gc/ 2>/dev/null
rm -f /tmp/gc/gcache/calibration.json /tmp/gc/gcache/gpuio/calibration.json
export XDG_CACHE_HOME=/tmp/gc/gcache
R=$OUT/r; mkdir -p $R
pack() { (cd $OUT && tar czf r.tgz r && tar czf gcache.tgz -C /tmp/gc gcache); }
nvidia-smi --query-gpu=name,driver_version,pcie.link.gen.current,pcie.link.width.current --format=csv > $R/gpu.txt
t0=$(date +%s)
( timeout 280 $S/gpuio-base bench --only latency --backend cuda/forward > $R/warm-base.log 2>&1 ) &
( timeout 280 $S/gpuio-turn1 bench --only latency --backend cuda/forward > $R/warm-turn1.log 2>&1 ) &
wait
echo "== warm $(( $(date +%s)-t0 )) s" >> $R/summary.txt
pack
lat() { # name binary
  timeout 60 $S/gpuio-$2 bench --only latency --backend cuda > $R/lat-$1.log 2>&1
  echo "== lat $1 rc=$?" >> $R/summary.txt
  grep -E "latency p50|one NOP" $R/lat-$1.log >> $R/summary.txt
}
lat base1 base; lat turn1a turn1; lat base2 base; lat turn1b turn1
pack
t0=$(date +%s)
timeout 200 $S/gpuio-turn1 selftest --backend cuda > $R/selftest-turn1.log 2>&1
echo "== selftest turn1 rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
tail -1 $R/selftest-turn1.log >> $R/summary.txt
grep -E "^FAIL|^fail" $R/selftest-turn1.log | head >> $R/summary.txt
pack
timeout 150 ncu --clock-control none --replay-mode application -k regex:nop_anatomy -c 1 --section SourceCounters --section WarpStateStats -o $R/anat -f $S/gpuio-turn1 bench --only latency --backend cuda/forward > $R/ncu.log 2>&1
echo "== ncu rc=$?" >> $R/summary.txt
ncu -i $R/anat.ncu-rep --page source --csv --print-source sass > $R/anat-sass.csv 2>/dev/null
rm -f $R/anat.ncu-rep
pack
cat $R/summary.txt
