#!/bin/bash
# Session 2026-11-28c, call 1: a524d72's header on the GPU (selftest, direct bulk) and what the
# submit's system release and the give-back's release cost a forward NOP (variants for measurement only).
S=./.gpucheck/m1
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
lat base1 base; lat nofence1 nofence; lat relgive1 relgive; lat both1 both
lat base2 base; lat nofence2 nofence; lat relgive2 relgive; lat both2 both
pack
t0=$(date +%s)
timeout 200 $S/gpuio-base selftest --backend cuda > $R/selftest.log 2>&1
echo "== selftest rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
sed 's/\x1b\[[0-9;]*m//g' $R/selftest.log | tail -2 >> $R/summary.txt
sed 's/\x1b\[[0-9;]*m//g' $R/selftest.log | grep -iE "^fail|FAIL" | head >> $R/summary.txt
pack
t0=$(date +%s)
timeout 150 $S/gpuio-base bench --only bulk --backend cuda/direct --repeats 3 > $R/bulk-direct.log 2>&1
echo "== bulk direct rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
pack
t0=$(date +%s)
timeout 150 ncu --clock-control none --replay-mode application -k regex:nop_anatomy -c 1 --section SourceCounters --section WarpStateStats -o $R/anat -f $S/gpuio-base bench --only latency --backend cuda/forward > $R/ncu.log 2>&1
echo "== ncu rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
ncu -i $R/anat.ncu-rep --page source --csv --print-source sass > $R/anat-sass.csv 2>/dev/null
rm -f $R/anat.ncu-rep
pack
cat $R/summary.txt
