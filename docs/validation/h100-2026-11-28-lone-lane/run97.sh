#!/bin/bash
# run 97 (H100): direct with its large positioned transfers marked IOSQE_ASYNC (m97) against
# 5904abb (m96): requests on cuda/direct once each, interleaved; selftest of m97 on cuda.
set -u
R=$OUT/r; mkdir -p $R /tmp/gc97o /tmp/gc97n
finish() { (cd $OUT && tar czf r.tgz r); }
chmod +x .gpucheck/m96/gpuio .gpucheck/m97/gpuio
export XDG_CACHE_HOME=/tmp/gc97n
timeout 150 .gpucheck/m97/gpuio selftest --backend cuda > $R/selftest-new.log 2>&1; echo "rc $?" >> $R/selftest-new.log
finish
for b in new old; do
  if [ $b = old ]; then export XDG_CACHE_HOME=/tmp/gc97o; B=.gpucheck/m96/gpuio; else export XDG_CACHE_HOME=/tmp/gc97n; B=.gpucheck/m97/gpuio; fi
  timeout 220 $B bench --only requests --backend cuda/direct --repeats 1 > $R/req-$b.log 2> $R/req-$b.err; echo "rc $?" >> $R/req-$b.log
  finish
done
