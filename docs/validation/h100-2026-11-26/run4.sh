#!/bin/bash
# Call 4 of 2026-11-26. D = 1bbe87e (as in call 3); E = D + bulk channel of 256 slots
# (forward then has 4 rings) + whole-device printf 2^21 lines (16 per thread).
# The whole bench on E (every pair, one repeat), then D's requests on forward and
# mailbox for the bulk A/B.
S=./.gpucheck/m
mkdir -p /tmp/gc && cp -r .gpucheck/gc/gcache /tmp/gc/ 2>/dev/null
export XDG_CACHE_HOME=/tmp/gc/gcache
R=$OUT/r; mkdir -p $R
pack() { (cd $OUT && tar czf r.tgz r); }
nvidia-smi --query-gpu=name,driver_version --format=csv > $R/machine.txt 2>&1; uname -r >> $R/machine.txt
t0=$(date +%s)
timeout 380 $S/gpuio-E bench --repeats 1 --json > $R/bench-E.json 2> $R/bench-E.err
echo "== bench E rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
pack
for pair in forward mailbox; do
  t0=$(date +%s)
  timeout 60 $S/gpuio-D bench --only requests --backend cuda/$pair --repeats 1 > $R/req-D-$pair.txt 2> $R/req-D-$pair.err
  echo "== requests D $pair rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
  grep -E "1 MiB p|printf, whole" $R/req-D-$pair.txt | grep -v "also" >> $R/summary.txt
  pack
done
grep -E "1 MiB p|printf, whole|printf bytes, whole|msg/s|latency p50" $R/bench-E.err | grep -v "also" >> $R/summary.txt
pack
cat $R/summary.txt
