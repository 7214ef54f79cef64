#!/bin/bash
# Call 5 of 2026-11-26. E = e9a7408 (as in call 4); F = E + direct's device-scope
# locks, SQ stamps and answers; F16 = F with 16 claim funnels instead of 64 (an
# experiment, not committed). selftest F; latency E/F/E; direct requests E then F;
# queues F/F16/F.
S=./.gpucheck/m
mkdir -p /tmp/gc && cp -r .gpucheck/gc/gcache /tmp/gc/ 2>/dev/null
export XDG_CACHE_HOME=/tmp/gc/gcache
R=$OUT/r; mkdir -p $R
pack() { (cd $OUT && tar czf r.tgz r); }
t0=$(date +%s)
timeout 250 $S/gpuio-F selftest --backend cuda > $R/selftest-F.txt 2> $R/selftest-F.err
echo "== selftest F rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
grep -E "passed|FAIL" $R/selftest-F.txt | tail -5 >> $R/summary.txt
pack
i=0
for bin in E F E; do
  i=$((i+1)); t0=$(date +%s)
  timeout 100 $S/gpuio-$bin bench --only latency --repeats 3 > $R/lat-$i-$bin.txt 2> $R/lat-$i-$bin.err
  echo "== latency $bin rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
  grep -E "NOP latency p50|pwrite latency p50" $R/lat-$i-$bin.txt >> $R/summary.txt
  grep -E "direct: one NOP" $R/lat-$i-$bin.err | tail -1 >> $R/summary.txt
  pack
done
for bin in E F; do
  t0=$(date +%s)
  timeout 60 $S/gpuio-$bin bench --only requests --backend cuda/direct --repeats 1 > $R/req-$bin-direct.txt 2> $R/req-$bin-direct.err
  echo "== requests $bin direct rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
  grep -E "whole device|1 MiB p|64 threads" $R/req-$bin-direct.txt | grep -v "also" >> $R/summary.txt
  pack
done
i=0
for bin in F F16 F; do
  i=$((i+1)); t0=$(date +%s)
  timeout 150 $S/gpuio-$bin bench --only queues --repeats 1 > $R/q-$i-$bin.txt 2> $R/q-$i-$bin.err
  echo "== queues $bin rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
  grep -E "B: .*msg/s; the host" $R/q-$i-$bin.err >> $R/summary.txt
  grep -E "queue to host, 64 B messages" $R/q-$i-$bin.txt >> $R/summary.txt
  pack
done
cat $R/summary.txt
