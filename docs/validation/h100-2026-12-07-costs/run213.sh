#!/bin/bash
# run 213: the call's words in one batch (uncommitted, h2) against 9057805 (h): selftest h2, latency interleaved x3.
R=$OUT/r; mkdir -p $R; export XDG_CACHE_HOME=/tmp/gc
S=.gpucheck/s18
nvidia-smi -q | grep -i -E "Product Name|Driver Version" | head -3 > $R/gpu.txt; uname -r > $R/uname.txt; date -u >> $R/uname.txt
t=$(date +%s); timeout 150 $S/h2/gpuio selftest --backend cuda > $R/selftest.log 2>&1; echo "selftest rc $? $(( $(date +%s)-t ))s"; tail -2 $R/selftest.log | sed 's/\x1b\[[0-9;]*m//g' | cut -c1-300
(cd $OUT && tar czf r.tgz r)
n=0
for b in h h2 h h2 h h2; do n=$((n+1))
  timeout 60 $S/$b/gpuio bench --backend cuda --only latency --repeats 3 --json > $R/lat-$n-$b.json 2> $R/lat-$n-$b.err; echo "lat $b rc $?"
  sed 's/\x1b\[[0-9;]*m//g' $R/lat-$n-$b.err | grep -E "(forward|mailbox|direct): NOP latency p50|forward: one NOP|forward: 64 B pwrite|floor" | cut -c3-170
done
(cd $OUT && tar czf r.tgz r)
date -u >> $R/uname.txt
(cd $OUT && tar czf r.tgz r)
