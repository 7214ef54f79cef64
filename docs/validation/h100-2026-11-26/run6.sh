#!/bin/bash
# Call 6 of 2026-11-26: main 051be65 (G), the session's last code. selftest; the
# whole bench (every pair, 3 repeats, JSON, plot); probe (the calibration it stored).
S=./.gpucheck/m
mkdir -p /tmp/gc && cp -r .gpucheck/gc/gcache /tmp/gc/ 2>/dev/null
export XDG_CACHE_HOME=/tmp/gc/gcache
R=$OUT/r; mkdir -p $R
pack() { (cd $OUT && tar czf r.tgz r); }
nvidia-smi --query-gpu=name,driver_version --format=csv > $R/machine.txt 2>&1; uname -r >> $R/machine.txt; nproc >> $R/machine.txt
t0=$(date +%s)
timeout 170 $S/gpuio-G selftest --backend cuda > $R/selftest-G.txt 2> $R/selftest-G.err
echo "== selftest G rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
grep -E "passed|FAIL" $R/selftest-G.txt | tail -5 >> $R/summary.txt
pack
t0=$(date +%s)
timeout 390 $S/gpuio-G bench --json --plot $R/bench-G.svg > $R/bench-G.json 2> $R/bench-G.err
echo "== bench G rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
pack
timeout 60 $S/gpuio-G probe > $R/probe-G.txt 2>&1
echo "== probe rc=$?" >> $R/summary.txt
grep -E "printf|1 MiB p|latency p50|msg/s|Mop/s|kreq" $R/bench-G.err | grep -v "also\|gpuio bench:" >> $R/summary.txt
pack
cat $R/summary.txt
