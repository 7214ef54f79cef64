#!/bin/bash
# Session 2026-11-28e, call 4: does the device's answer-polling slow the host's copies? m22 (waits capped at 1 us between
# polls) against m23 (16 us), bulk on forward and direct, interleaved.
mkdir -p /tmp/gc; export XDG_CACHE_HOME=/tmp/gc
R=$OUT/r; mkdir -p $R
pack() { (cd $OUT && tar czf r.tgz r); }
t0=$(date +%s)
for t in forward direct; do
for m in m22 m23; do
  timeout 100 ./bin/$m/gpuio bench --only bulk --backend cuda/$t --repeats 1 > $R/bulk-$t-$m.log 2>&1
  echo "== $t $m rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
  pack
done
done
cat $R/summary.txt
