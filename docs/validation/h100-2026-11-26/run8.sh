#!/bin/bash
# Call 8 of 2026-11-26: I = 235ad96 (host threads sleep up to 50 ms after a second of
# quiet) against H = 0332012, the queue figures (the idle channel last), 3 repeats each.
S=./.gpucheck/m
mkdir -p /tmp/gc && cp -r .gpucheck/gc/gcache /tmp/gc/ 2>/dev/null
export XDG_CACHE_HOME=/tmp/gc/gcache
R=$OUT/r; mkdir -p $R
pack() { (cd $OUT && tar czf r.tgz r); }
for bin in I H; do
  t0=$(date +%s)
  timeout 220 $S/gpuio-$bin bench --only queues --repeats 3 > $R/q-$bin.txt 2> $R/q-$bin.err
  echo "== queues $bin rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
  grep -E "idle|queue to host, 64 B messages|queue to device, 64 B" $R/q-$bin.txt >> $R/summary.txt
  pack
done
cat $R/summary.txt
