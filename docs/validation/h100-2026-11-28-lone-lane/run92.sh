#!/bin/bash
# run 92 (H100): main d9dd511 — one thread's latency (3 repeats), registers/stack and SASS of
# the latency kernels, ncu source counters of one forward NOP latency kernel.
set -u
R=$OUT/r; mkdir -p $R /tmp/gc92
export XDG_CACHE_HOME=/tmp/gc92
B=.gpucheck/m92/gpuio
chmod +x $B
finish() { (cd $OUT && tar czf r.tgz r); }
timeout 150 $B bench --only latency --repeats 3 > $R/lat.log 2> $R/lat.err; echo "rc $?" >> $R/lat.log
finish
for f in /tmp/gc92/gpuio/*.cubin; do
  if cuobjdump -res-usage $f 2>/dev/null | grep -q "gpuio_k_latency"; then
    echo "== $f" >> $R/res.txt
    cuobjdump -res-usage $f 2>&1 | grep -A1 -E "gpuio_k_(nop|latency|nop_anatomy|pingpong)\b" >> $R/res.txt
    cuobjdump -sass -fun gpuio_k_latency $f > $R/latency.sass 2>&1
    cuobjdump -sass -fun gpuio_k_nop_anatomy $f > $R/anatomy.sass 2>&1
  fi
done
finish
timeout 240 ncu --clock-control none --replay-mode application -k regex:gpuio_k_latency --launch-skip 0 --launch-count 1 \
  --section SourceCounters --section WarpStateStats --section LaunchStats --section Occupancy -o $R/lat \
  $B bench --only latency --backend cuda/forward --repeats 1 > $R/ncu.log 2>&1; echo "ncu rc $?" >> $R/ncu.log
ncu --import $R/lat.ncu-rep --print-details all > $R/lat-details.txt 2>&1
ncu --import $R/lat.ncu-rep --page source --print-source sass --csv > $R/lat-sass.csv 2>&1
rm -f $R/lat.ncu-rep
nvidia-smi -q | grep -E "Product Name|Driver Version|CUDA Version" > $R/gpu.txt; uname -r >> $R/gpu.txt
finish
