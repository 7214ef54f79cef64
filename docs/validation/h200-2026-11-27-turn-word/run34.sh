#!/bin/bash
# Session 2026-11-27b, call 4: turn3 (turn2 + the wait's deadline from the slot, forward's words in one trip, eager first polls) vs 59dcac3 (base).
S=./.gpucheck/m
mkdir -p /tmp/gc && cp -r .gpucheck/gc/gcache /tmp/gc/ 2>/dev/null
rm -f /tmp/gc/gcache/calibration.json /tmp/gc/gcache/gpuio/calibration.json
export XDG_CACHE_HOME=/tmp/gc/gcache
R=$OUT/r; mkdir -p $R
pack() { (cd $OUT && tar czf r.tgz r && tar czf gcache.tgz -C /tmp/gc gcache); }
nvidia-smi --query-gpu=name,driver_version,pcie.link.gen.current,pcie.link.width.current --format=csv > $R/gpu.txt
t0=$(date +%s)
( timeout 280 $S/gpuio-turn3 bench --only latency --backend cuda/forward > $R/warm-turn3.log 2>&1 ) &
wait
echo "== warm $(( $(date +%s)-t0 )) s" >> $R/summary.txt
pack
lat() { # name binary
  timeout 60 $S/gpuio-$2 bench --only latency --backend cuda > $R/lat-$1.log 2>&1
  echo "== lat $1 rc=$?" >> $R/summary.txt
  grep -E "latency p50|one NOP" $R/lat-$1.log >> $R/summary.txt
}
lat base1 base; lat turn3a turn3; lat base2 base; lat turn3b turn3
pack
t0=$(date +%s)
timeout 200 $S/gpuio-turn3 selftest --backend cuda > $R/selftest-turn3.log 2>&1
echo "== selftest turn3 rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
tail -1 $R/selftest-turn3.log >> $R/summary.txt
grep -E "^FAIL|^fail" $R/selftest-turn3.log | head >> $R/summary.txt
pack
timeout 150 ncu --clock-control none --replay-mode application -k regex:nop_anatomy -c 1 --section SourceCounters --section WarpStateStats -o $R/anat -f $S/gpuio-turn3 bench --only latency --backend cuda/forward > $R/ncu.log 2>&1
echo "== ncu rc=$?" >> $R/summary.txt
ncu -i $R/anat.ncu-rep --page source --csv --print-source sass > $R/anat-sass.csv 2>/dev/null
rm -f $R/anat.ncu-rep
pack
rq() { # name, binary
  local t0=$(date +%s)
  timeout 200 $S/gpuio-$2 bench --only requests --backend cuda/forward --repeats 3 > $R/rq-$1.log 2>&1
  echo "== rq $1 rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
  grep -E -A1 "NOPs, whole|small ops|4 KiB p(write|read)" $R/rq-$1.log | grep -v "^--" | head -12 >> $R/summary.txt
}
rq turn3 turn3
pack
cat $R/summary.txt
