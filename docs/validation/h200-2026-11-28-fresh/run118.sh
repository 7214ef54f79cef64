#!/bin/bash
# Session 2026-11-28e, call 1: e17c1cb — selftest; the registration anchor's forward bulk against no sharing; latency baseline.
S=./bin/m20
mkdir -p /tmp/gc; export XDG_CACHE_HOME=/tmp/gc
R=$OUT/r; mkdir -p $R
pack() { (cd $OUT && tar czf r.tgz r); }
t0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version --format=csv > $R/gpu.txt 2>&1
timeout 150 $S/gpuio selftest --backend cuda > $R/selftest.log 2>&1
echo "== selftest rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt; tail -3 $R/selftest.log >> $R/summary.txt
for i in 1 2; do
timeout 90 $S/gpuio bench --only bulk --backend cuda/forward --repeats 1 > $R/bulk-reg$i.log 2>&1
echo "== bulk reg$i rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
GPUIO_FORWARD_WQ_SHARE=0 timeout 90 $S/gpuio bench --only bulk --backend cuda/forward --repeats 1 > $R/bulk-none$i.log 2>&1
echo "== bulk none$i rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
pack
done
timeout 60 $S/gpuio bench --only latency --backend cuda --repeats 3 > $R/lat.log 2>&1
echo "== lat rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
pack; cat $R/summary.txt
