#!/bin/bash
# Call 4 of 2026-11-27 (second stop), main 2d57eb6: the whole bench, 3 repeats, for BENCHMARKS.md.
S=./.gpucheck/m50
mkdir -p /tmp/gc/gcache; cp -r .gpucheck/gc/gcache/. /tmp/gc/gcache/ 2>/dev/null
export XDG_CACHE_HOME=/tmp/gc/gcache
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,pcie.link.gen.current,pcie.link.width.current --format=csv > $R/gpu.txt 2>&1
t0=$(date +%s)
timeout 585 $S/gpuio-main bench --repeats 3 --plot $R/bench.svg > $R/bench.log 2> $R/bench.err
echo "== bench rc=$? $(( $(date +%s)-t0 )) s" >> $R/bench.log
(cd $OUT && tar czf r.tgz r); tar czf $OUT/gcache.tgz -C /tmp/gc gcache
tail -5 $R/bench.log
