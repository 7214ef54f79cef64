#!/bin/bash
# Call 9 of 2026-11-26: claim funnels 64 (I = main) / 128 / 256 / 64, queue figures.
S=./.gpucheck/m
mkdir -p /tmp/gc && cp -r .gpucheck/gc/gcache /tmp/gc/ 2>/dev/null
export XDG_CACHE_HOME=/tmp/gc/gcache
R=$OUT/r; mkdir -p $R
pack() { (cd $OUT && tar czf r.tgz r); }
i=0
for bin in I F128 F256 I; do
  i=$((i+1)); t0=$(date +%s)
  timeout 200 $S/gpuio-$bin bench --only queues --repeats 1 > $R/q-$i-$bin.txt 2> $R/q-$i-$bin.err
  echo "== queues $bin rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
  grep -E "B: .*msg/s; the host" $R/q-$i-$bin.err >> $R/summary.txt
  pack
done
cat $R/summary.txt
