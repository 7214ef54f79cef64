#!/bin/bash
# The whole bench at 7069a74 (the close handshake on the kernel's copy, 256 ns caps on device-local waits).
S=./.gpucheck/s6/fin
mkdir -p /tmp/gc; export XDG_CACHE_HOME=/tmp/gc
R=$OUT/r; mkdir -p $R
pack() { (cd $OUT && tar czf r.tgz r); }
t0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,pcie.link.gen.current,pcie.link.width.current --format=csv > $R/gpu.txt 2>&1
uname -r >> $R/gpu.txt
timeout 500 $S/gpuio bench --repeats 3 --json --plot $R/bench.svg > $R/bench.json 2> >(python3 -u -c 'import sys,time
t0=time.time()
for l in sys.stdin: sys.stdout.write("%.1f %s" % (time.time()-t0, l))' > $R/bench.err)
echo "== bench rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
pack; cat $R/summary.txt; grep -E "NOPs, whole|SQPOLL ring of|NOP latency p50" $R/bench.err | tail -24
