#!/bin/bash
# Call 3: forward counters per ring (ctr) against main: whole-device NOPs by gpuio run, interleaved;
# then bench --only requests on cuda/forward for each.
S=./.gpucheck/m
T0=$(date +%s)
mkdir -p /tmp/gc/gcache; cp -r .gpucheck/gc/gcache/. /tmp/gc/gcache/ 2>/dev/null
export XDG_CACHE_HOME=/tmp/gc/gcache
R=$OUT/r; mkdir -p $R
pack() { (cd $OUT && tar czf r.tgz r); tar czf $OUT/gcache.tgz -C /tmp/gc gcache; }
for rep in 1 2; do for sl in 256 1024; do for b in main ctr; do
  t0=$(date +%s)
  timeout 60 $S/gpuio-$b run nops.cu --backend cuda/forward --grid 132 --block 1024 --slots $sl --arg 16 --arg 0 > $R/n-$b-$sl-$rep.log 2>&1
  echo "== nops $b slots $sl rc=$? $(( $(date +%s)-t0 )) s: $(grep -o 'finished in.*' $R/n-$b-$sl-$rep.log)" >> $R/summary.txt
done; done; done
pack
for b in ctr main; do
  left=$(( T0 + 560 - $(date +%s) )); [ $left -lt 40 ] && break
  t0=$(date +%s)
  timeout $left $S/gpuio-$b bench --only requests --backend cuda/forward --repeats 3 > $R/req-$b.log 2>&1
  echo "== requests $b rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
  grep -iE "NOP|whole|4 KiB|64 B" $R/req-$b.log | head -20 >> $R/summary.txt
  pack
done
cat $R/summary.txt
