#!/bin/bash
# Session 2026-11-26 evening, call 12: the whole bench (3 repeats) on main at the end
# of the session's code.
S=./.gpucheck/m
mkdir -p /tmp/gc && cp -r .gpucheck/gc/gcache /tmp/gc/ 2>/dev/null
rm -f /tmp/gc/gcache/calibration.json
export XDG_CACHE_HOME=/tmp/gc/gcache
R=$OUT/r; mkdir -p $R
pack() { (cd $OUT && tar czf r.tgz r); }
nvidia-smi --query-gpu=name,driver_version,pcie.link.gen.current,pcie.link.width.current --format=csv > $R/machine.txt 2>&1; uname -r >> $R/machine.txt; nproc >> $R/machine.txt
t0=$(date +%s)
timeout 570 $S/gpuio-final2 bench --json > $R/bench.json 2> $R/bench.err
echo "== bench rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
grep -E "^  " $R/bench.err >> $R/summary.txt
pack
cat $R/summary.txt | head -150
