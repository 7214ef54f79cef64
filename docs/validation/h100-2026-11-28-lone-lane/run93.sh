#!/bin/bash
# run 93 (H100): main d9dd511 (old) against the lone-lane wait (new: no warp-wide minimum or
# broadcast for a lane alone, no nanosleep of 0, the latency kernel's parameters read
# before the clock): latency interleaved, 3 x 3 repeats each; ncu of new's forward NOP
# latency kernel; selftest on cuda; whole-device requests on forward, one each.
set -u
R=$OUT/r; mkdir -p $R /tmp/gc93o /tmp/gc93n
finish() { (cd $OUT && tar czf r.tgz r); }
chmod +x .gpucheck/m92/gpuio .gpucheck/m93/gpuio
run() { # build tag cmd...
  local b=$1 t=$2; shift 2
  if [ $b = old ]; then export XDG_CACHE_HOME=/tmp/gc93o; B=.gpucheck/m92/gpuio; else export XDG_CACHE_HOME=/tmp/gc93n; B=.gpucheck/m93/gpuio; fi
  timeout 200 $B "$@" > $R/$t-$b.log 2> $R/$t-$b.err; echo "rc $?" >> $R/$t-$b.log
}
for i in 1 2 3; do
  for b in old new; do run $b lat$i bench --only latency --repeats 3; finish; done
done
run new selftest selftest --backend cuda; finish
export XDG_CACHE_HOME=/tmp/gc93n
timeout 150 ncu --clock-control none --replay-mode application -k regex:gpuio_k_latency --launch-skip 0 --launch-count 1 \
  --section SourceCounters --section WarpStateStats -o $R/lat \
  .gpucheck/m93/gpuio bench --only latency --backend cuda/forward --repeats 1 > $R/ncu.log 2>&1; echo "ncu rc $?" >> $R/ncu.log
ncu --import $R/lat.ncu-rep --print-details all > $R/lat-details.txt 2>&1
ncu --import $R/lat.ncu-rep --page source --print-source sass --csv > $R/lat-sass.csv 2>&1
rm -f $R/lat.ncu-rep
finish
for b in old new; do run $b req bench --only requests --backend cuda/forward --repeats 1; finish; done
