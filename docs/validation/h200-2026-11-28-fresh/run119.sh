#!/bin/bash
# Session 2026-11-28e, call 2: forward reads each run of pwrites to a regular file through just before sending it,
# keeping GPUIO_FORWARD_WARM_WRITES bytes in the ring (default 4 MiB) — against 0 (before), 2 MiB, 16 MiB.
S=./bin/m21
mkdir -p /tmp/gc; export XDG_CACHE_HOME=/tmp/gc
R=$OUT/r; mkdir -p $R
pack() { (cd $OUT && tar czf r.tgz r); }
t0=$(date +%s)
for w in default 0 2097152 16777216; do
  if [ $w = default ]; then unset GPUIO_FORWARD_WARM_WRITES; else export GPUIO_FORWARD_WARM_WRITES=$w; fi
  timeout 90 $S/gpuio bench --only bulk --backend cuda/forward --repeats 1 > $R/bulk-$w.log 2>&1
  echo "== bulk $w rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
  pack
done
for w in default 0; do
  if [ $w = default ]; then unset GPUIO_FORWARD_WARM_WRITES; else export GPUIO_FORWARD_WARM_WRITES=$w; fi
  timeout 90 $S/gpuio bench --only requests --backend cuda/forward --repeats 1 > $R/req-$w.log 2>&1
  echo "== req $w rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
  pack
done
cat $R/summary.txt
