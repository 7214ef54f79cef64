#!/bin/bash
# Session 2026-11-27, call 2: the answer in the stamp, the turn without a fence, the
# descriptor's loads together (new) against 8b42fe8 (8b4): selftest; one thread's
# round trips on every CUDA transport, interleaved; forward's request figures; ncu of
# the new NOP.
S=./.gpucheck/m
mkdir -p /tmp/gc && cp -r .gpucheck/gc/gcache /tmp/gc/ 2>/dev/null
rm -f /tmp/gc/gcache/calibration.json /tmp/gc/gcache/gpuio/calibration.json
export XDG_CACHE_HOME=/tmp/gc/gcache
R=$OUT/r; mkdir -p $R
pack() { (cd $OUT && tar czf r.tgz r && tar czf gcache.tgz -C /tmp/gc gcache); }
t0=$(date +%s)
timeout 300 $S/gpuio-new selftest --backend cuda > $R/selftest.log 2>&1
echo "== selftest new cuda rc=$? $(( $(date +%s)-t0 )) s; $(grep -c '^ok' $R/selftest.log) ok, $(grep -c '^FAIL' $R/selftest.log) failed" >> $R/summary.txt
grep "^FAIL" $R/selftest.log | cut -c1-300 >> $R/summary.txt
pack
lat() { # name, binary
  local t0=$(date +%s)
  timeout 60 $S/gpuio-$2 bench --only latency --backend cuda > $R/lat-$1.log 2>&1
  echo "== lat $1 rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
  grep -E "latency p50|one NOP" $R/lat-$1.log >> $R/summary.txt
}
lat new1 new; lat old1 8b4; lat new2 new; lat old2 8b4
pack
rq() { # name, binary
  local t0=$(date +%s)
  timeout 120 $S/gpuio-$2 bench --only requests --backend cuda/forward --repeats 3 > $R/rq-$1.log 2>&1
  echo "== rq $1 rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
  grep -E "NOPs, whole|NOP round trip|NOP latency p50|write\+read\+printf|pwrite.*one file|pread.*one file" $R/rq-$1.log | head -12 >> $R/summary.txt
}
rq new new
pack
rq old 8b4
pack
t0=$(date +%s)
timeout 120 ncu --clock-control none --replay-mode application -k regex:nop_anatomy -c 1 \
  --section SourceCounters --section WarpStateStats -o $R/anat -f \
  $S/gpuio-new bench --only latency --backend cuda/forward > $R/ncu.log 2>&1
echo "== ncu rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
ncu -i $R/anat.ncu-rep --page source --csv --print-source sass > $R/anat-sass.csv 2>$R/anat-sass.err
pack
cat $R/summary.txt
