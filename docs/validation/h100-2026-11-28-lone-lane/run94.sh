#!/bin/bash
# run 94 (H100): the ping-pong floor polled with and without a pause (probe pp.cu);
# the lone-lane build (m93) against the same with the latency kernel bounded to 32
# threads, so up to 255 registers (m95): latency interleaved, 2 x 3 repeats each.
set -u
R=$OUT/r; mkdir -p $R /tmp/gc94a /tmp/gc94b
finish() { (cd $OUT && tar czf r.tgz r); }
(cd .gpucheck/p94 && nvcc -O2 -arch=sm_90 -o pp pp.cu > $R/pp-build.log 2>&1; echo "build rc $?" >> $R/pp-build.log)
timeout 60 .gpucheck/p94/pp > $R/pp.log 2>&1; echo "rc $?" >> $R/pp.log
finish
chmod +x .gpucheck/m93/gpuio .gpucheck/m95/gpuio
for i in 1 2; do
  for b in m93 m95; do
    if [ $b = m93 ]; then export XDG_CACHE_HOME=/tmp/gc94a; else export XDG_CACHE_HOME=/tmp/gc94b; fi
    timeout 120 .gpucheck/$b/gpuio bench --only latency --repeats 3 > $R/lat$i-$b.log 2> $R/lat$i-$b.err; echo "rc $?" >> $R/lat$i-$b.log
    finish
  done
done
for f in /tmp/gc94b/gpuio/*.cubin; do cuobjdump -res-usage $f 2>&1 | grep -A1 -E "gpuio_k_latency\b"; done > $R/res95.txt
timeout 60 .gpucheck/p94/pp > $R/pp2.log 2>&1; echo "rc $?" >> $R/pp2.log
finish
