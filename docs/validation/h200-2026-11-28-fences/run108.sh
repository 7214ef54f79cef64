#!/bin/bash
# Session 2026-11-28c, call 2: forward requests as tagged words behind a fence placed first
# (new) against eae7c1a (base); nofence and relgive are measurement-only variants.
S=./.gpucheck/m2
mkdir -p /tmp/gc; export XDG_CACHE_HOME=/tmp/gc
R=$OUT/r; mkdir -p $R
pack() { (cd $OUT && tar czf r.tgz r); }
nvidia-smi --query-gpu=name,driver_version,pcie.link.gen.current,pcie.link.width.current --format=csv > $R/gpu.txt
uname -r >> $R/gpu.txt
lat() { # name binary
  local t0=$(date +%s)
  timeout 90 $S/gpuio-$2 bench --only latency --backend cuda/forward > $R/lat-$1.log 2>&1
  echo "== lat $1 rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
  sed 's/\x1b\[[0-9;]*m//g' $R/lat-$1.log | grep -E "latency p50|one NOP" >> $R/summary.txt
}
lat base1 base; lat new1 new; lat nofence1 nofence; lat relgive1 relgive
lat base2 base; lat new2 new; lat nofence2 nofence; lat relgive2 relgive
lat new3 new; lat base3 base
pack
t0=$(date +%s)
timeout 200 $S/gpuio-new selftest --backend cuda > $R/selftest.log 2>&1
echo "== selftest new rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
sed 's/\x1b\[[0-9;]*m//g' $R/selftest.log | grep -E "passed, |^FAIL|^fail" | head >> $R/summary.txt
pack
rq() { # name, binary
  local t0=$(date +%s)
  timeout 150 $S/gpuio-$2 bench --only requests --backend cuda/forward --repeats 3 > $R/rq-$1.log 2>&1
  echo "== rq $1 rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
  sed 's/\x1b\[[0-9;]*m//g' $R/rq-$1.log | grep -E "NOPs|small ops|64 B p|4 KiB p" | head -12 >> $R/summary.txt
}
rq new new; rq base base
pack
t0=$(date +%s)
timeout 120 ncu --clock-control none --replay-mode application -k regex:nop_anatomy -c 1 --section SourceCounters --section WarpStateStats -o $R/anat -f $S/gpuio-new bench --only latency --backend cuda/forward > $R/ncu.log 2>&1
echo "== ncu rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
ncu -i $R/anat.ncu-rep --page source --csv --print-source sass > $R/anat-sass.csv 2>/dev/null
rm -f $R/anat.ncu-rep
pack
cat $R/summary.txt
