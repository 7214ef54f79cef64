#!/bin/bash
# Session 2026-11-27, call 4: the whole bench on the landed build (fin), --repeats 3.
S=./.gpucheck/m
mkdir -p /tmp/gc && cp -r .gpucheck/gc/gcache /tmp/gc/ 2>/dev/null
rm -f /tmp/gc/gcache/calibration.json /tmp/gc/gcache/gpuio/calibration.json
export XDG_CACHE_HOME=/tmp/gc/gcache
R=$OUT/r; mkdir -p $R
pack() { (cd $OUT && tar czf r.tgz r); }
nvidia-smi --query-gpu=name,driver_version,pcie.link.gen.current,pcie.link.width.current --format=csv > $R/gpu.txt 2>&1
uname -r >> $R/gpu.txt
t0=$(date +%s)
timeout 540 $S/gpuio-fin bench --backend cuda --repeats 3 --json > $R/bench.json 2> $R/bench.log
echo "== bench fin rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
pack
cat $R/summary.txt
