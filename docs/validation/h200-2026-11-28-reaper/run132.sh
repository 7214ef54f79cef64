#!/bin/bash
# Session 2026-11-28f, call 8: the whole bench at 0d3c734 (direct's reaper: batched completions, plain CQE loads).
S=./.gpucheck/m7
mkdir -p /tmp/gc; export XDG_CACHE_HOME=/tmp/gc
R=$OUT/r; mkdir -p $R
pack() { (cd $OUT && tar czf r.tgz r); }
t0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,pcie.link.gen.current,pcie.link.width.current --format=csv > $R/gpu.txt 2>&1
timeout 540 $S/gpuio bench --repeats 3 --json --plot $R/bench.svg > $R/bench.json 2> >(python3 -u -c 'import sys,time
t0=time.time()
for l in sys.stdin: sys.stdout.write("%.1f %s" % (time.time()-t0, l))' > $R/bench.err)
echo "== bench rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
pack; cat $R/summary.txt; grep -E "direct: (NOPs|4 KiB|64 B)" $R/bench.err | tail -12
