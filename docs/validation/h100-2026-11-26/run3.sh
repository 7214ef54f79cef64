#!/bin/bash
# Call 3 of 2026-11-26. main = 90445aa; D = 1bbe87e: main + device copies with 8
# loads in flight, device-scope turns, closing read while the slot is taken, mailbox
# device_out mirror, forward 4 rings (at least 64 slots each), to-device claim funnels.
# selftest D; latency D/main/D; queues D/main/D; requests mailbox+forward main then D.
S=./.gpucheck/m
export XDG_CACHE_HOME=/tmp/gcache
R=$OUT/r; mkdir -p $R
pack() { (cd $OUT && tar czf r.tgz r); }
t0=$(date +%s)
timeout 250 $S/gpuio-D selftest --backend cuda > $R/selftest-D.txt 2> $R/selftest-D.err
echo "== selftest D rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
grep -E "passed|FAIL" $R/selftest-D.txt | tail -5 >> $R/summary.txt
pack
i=0
for bin in D main D; do
  i=$((i+1)); t0=$(date +%s)
  timeout 150 $S/gpuio-$bin bench --only latency --repeats 3 > $R/lat-$i-$bin.txt 2> $R/lat-$i-$bin.err
  echo "== latency $bin rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
  grep -E "NOP latency p50" $R/lat-$i-$bin.txt >> $R/summary.txt
  pack
done
i=0
for bin in D main D; do
  i=$((i+1)); t0=$(date +%s)
  timeout 100 $S/gpuio-$bin bench --only queues --repeats 1 > $R/q-$i-$bin.txt 2> $R/q-$i-$bin.err
  echo "== queues $bin rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
  grep -E "queue to device|queue to host, 64 B messages" $R/q-$i-$bin.txt >> $R/summary.txt
  grep -E "B: .*msg/s; the host" $R/q-$i-$bin.err >> $R/summary.txt
  pack
done
for bin in main D; do
for pair in mailbox forward; do
  t0=$(date +%s)
  timeout 60 $S/gpuio-$bin bench --only requests --backend cuda/$pair --repeats 1 > $R/req-$bin-$pair.txt 2> $R/req-$bin-$pair.err
  echo "== requests $bin $pair rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
  grep -E "whole device|1 MiB p" $R/req-$bin-$pair.txt | grep -v "also" >> $R/summary.txt
  pack
done
done
(cd /tmp && tar czf $OUT/gcache.tgz gcache)
cat $R/summary.txt
