#!/bin/bash
# run 208: same build: the whole bench (small-block build on, the default), then forward's and direct's bulk off/on.
R=$OUT/r; mkdir -p $R; export XDG_CACHE_HOME=/tmp/gc-1
S=.gpucheck/s17; B=$S/h/gpuio
nvidia-smi -q | grep -i -E "Product Name|Driver Version" | head -3 > $R/gpu.txt; uname -r > $R/uname.txt; nproc >> $R/uname.txt; date -u >> $R/uname.txt
timeout 330 $B bench --repeats 3 --json --plot $R/bench.svg > $R/bench.json 2> $R/bench.err; echo "bench rc $? $(date +%T)"
sed 's/\x1b\[[0-9;]*m//g' $R/bench.err | grep -E "^  (forward|direct|mailbox): (NOP latency p50|1 MiB p(read|write), whole device, one file  |NOPs, whole device 132x1024  )" | cut -c1-150
(cd $OUT && tar czf r.tgz r)
n=0
for t in forward direct; do for m in 0 1; do n=$((n+1))
  GPUIO_SMALL_BLOCK_BUILD=$m timeout 70 $B bench --backend cuda/$t --only bulk --repeats 1 --json > $R/bulk-$n-$t-$m.json 2> $R/bulk-$n-$t-$m.err; echo "bulk $t $m rc $?"
  sed 's/\x1b\[[0-9;]*m//g' $R/bulk-$n-$t-$m.err | grep -E "^  $t: 1 MiB p(read|write), whole device, one file  " | cut -c1-130
done; done
date -u >> $R/uname.txt
(cd $OUT && tar czf r.tgz r)
