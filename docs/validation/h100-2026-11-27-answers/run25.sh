#!/bin/bash
# Session 2026-11-26/27, call 1: 8b42fe8 on the H100: selftest; where one NOP's
# device steps stall (ncu source counters, nop_anatomy); forward's whole-device NOPs
# against a2164fd; queue capacities for 64 B.
S=./.gpucheck/m
mkdir -p /tmp/gc && cp -r .gpucheck/gc/gcache /tmp/gc/ 2>/dev/null
rm -f /tmp/gc/gcache/calibration.json /tmp/gc/gcache/gpuio/calibration.json
export XDG_CACHE_HOME=/tmp/gc/gcache
R=$OUT/r; mkdir -p $R
pack() { (cd $OUT && tar czf r.tgz r && tar czf gcache.tgz -C /tmp/gc gcache); }
nvidia-smi --query-gpu=name,driver_version,pcie.link.gen.current,pcie.link.width.current --format=csv > $R/gpu.txt 2>&1
t0=$(date +%s)
timeout 300 $S/gpuio-8b4 selftest --backend cuda > $R/selftest.log 2>&1
echo "== selftest 8b4 cuda rc=$? $(( $(date +%s)-t0 )) s; $(grep -c '^ok' $R/selftest.log) ok, $(grep -c '^FAIL' $R/selftest.log) failed" >> $R/summary.txt
grep "^FAIL" $R/selftest.log | cut -c1-300 >> $R/summary.txt
pack
t0=$(date +%s)
timeout 200 ncu --clock-control none --replay-mode application -k regex:nop_anatomy -c 1 \
  --section SourceCounters --section WarpStateStats -o $R/anat -f \
  $S/gpuio-8b4 bench --only latency --backend cuda/forward > $R/ncu.log 2>&1
echo "== ncu rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
ncu -i $R/anat.ncu-rep --page source --csv --print-source sass > $R/anat-sass.csv 2>$R/anat-sass.err
ncu -i $R/anat.ncu-rep --page details > $R/anat-details.txt 2>&1
tail -5 $R/ncu.log >> $R/summary.txt
pack
rq() { # name, binary
  local n=$1; local b=$2; local t0=$(date +%s)
  timeout 120 $S/gpuio-$b bench --only requests --backend cuda/forward --repeats 3 > $R/rq-$n.log 2>&1
  echo "== rq $n ($b) rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
  grep -E "NOPs, whole|NOP round trip|NOP latency p50|one NOP|write\+read\+printf" $R/rq-$n.log | head -8 >> $R/summary.txt
}
rq 8b4 8b4
rq main main
pack
for c in 4096 16384 65536; do
  t0=$(date +%s)
  GPUIO_BENCH_QUEUE_CAPACITY=$c GPUIO_BENCH_QUEUE_SIZES=64 timeout 60 $S/gpuio-8b4 bench --only queues --repeats 3 > $R/q-$c.log 2>&1
  echo "== queues cap $c rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
  grep -E "64 B" $R/q-$c.log | head -6 >> $R/summary.txt
done
pack
cat $R/summary.txt
