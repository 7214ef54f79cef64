#!/bin/bash
# Call 2 of 2026-11-26. A = main 90445aa; B = A + device copies with 8 loads in flight,
# device-scope turns, `closing` read while the slot is taken, mailbox device_out
# mirror, forward 4 rings by default. selftest B; latency B/A/B; requests on
# mailbox and forward, B then A (forward at 4 rings both).
S=./.gpucheck/m
export XDG_CACHE_HOME=/tmp/gcache
R=$OUT/r; mkdir -p $R
pack() { (cd $OUT && tar czf r.tgz r); }
t0=$(date +%s)
timeout 260 $S/gpuio-B selftest --backend cuda > $R/selftest-B.txt 2> $R/selftest-B.err
echo "== selftest B rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
grep -E "passed|FAIL" $R/selftest-B.txt | tail -5 >> $R/summary.txt
pack
i=0
for bin in B A B; do
  i=$((i+1)); t0=$(date +%s)
  timeout 150 $S/gpuio-$bin bench --only latency --repeats 3 > $R/lat-$i-$bin.txt 2> $R/lat-$i-$bin.err
  echo "== latency $bin rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
  grep -E "latency p50" $R/lat-$i-$bin.txt >> $R/summary.txt
  grep -E "median of each step" $R/lat-$i-$bin.err | sort -u >> $R/summary.txt
  pack
done
for bin in B A; do
for pair in mailbox forward; do
  t0=$(date +%s)
  GPUIO_FORWARD_RINGS=4 timeout 100 $S/gpuio-$bin bench --only requests --backend cuda/$pair --repeats 1 > $R/req-$bin-$pair.txt 2> $R/req-$bin-$pair.err
  echo "== requests $bin $pair rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
  grep -E "whole device|1 MiB p" $R/req-$bin-$pair.txt | grep -v "also" >> $R/summary.txt
  pack
done
done
cat $R/summary.txt
