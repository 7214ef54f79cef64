#!/bin/bash
# run 209: same build: forward's bulk off/on interleaved x3, direct's x2 (the small-block build and 1 MiB writes).
R=$OUT/r; mkdir -p $R; export XDG_CACHE_HOME=/tmp/gc-1
S=.gpucheck/s17; B=$S/h/gpuio
date -u > $R/uname.txt
n=0
for t in forward forward forward direct direct; do for m in 0 1; do n=$((n+1))
  GPUIO_SMALL_BLOCK_BUILD=$m timeout 60 $B bench --backend cuda/$t --only bulk --repeats 1 --json > $R/bulk-$n-$t-$m.json 2> $R/bulk-$n-$t-$m.err; echo "bulk $t $m rc $?"
  sed 's/\x1b\[[0-9;]*m//g' $R/bulk-$n-$t-$m.err | grep -E "^  $t: 1 MiB p(read|write), whole device, one file  " | cut -c1-130
done; (cd $OUT && tar czf r.tgz r); done
date -u >> $R/uname.txt
(cd $OUT && tar czf r.tgz r)
