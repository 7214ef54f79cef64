#!/bin/bash
# Session 2026-11-26 evening, call 3: P = padded sender tails + the kernel's own
# `closing` copy (working tree after f2f074a) against main (ff36e48): NOP latency,
# the queue to the device by host senders, selftest on P.
S=./.gpucheck/m
mkdir -p /tmp/gc && cp -r .gpucheck/gc/gcache /tmp/gc/ 2>/dev/null
export XDG_CACHE_HOME=/tmp/gc/gcache
R=$OUT/r; mkdir -p $R
pack() { (cd $OUT && tar czf r.tgz r); }
lat() { # name binary
  t0=$(date +%s)
  timeout 240 $S/$2 bench --only latency --backend cuda > $R/lat-$1.log 2>&1
  echo "== lat $1 ($2) rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
  grep -E "NOP|step|floor" $R/lat-$1.log | grep -v '^gpuio bench: [a-z]* \.\.\.$' >> $R/summary.txt
  pack
}
lat P gpuio-P
lat main gpuio-main
i=0
q() { # name senders binary
  i=$((i+1)); t0=$(date +%s)
  GPUIO_BENCH_QUEUE_SIZES=64,256,4096 GPUIO_BENCH_QUEUE_SENDERS=$2 timeout 150 $S/$3 bench --only queues --backend cuda --repeats 1 > $R/q$i-$1.log 2>&1
  echo "== q$i $1 (senders $2, $3) rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
  grep -E "B: .* M msg/s; .*host thread|queue to device" $R/q$i-$1.log >> $R/summary.txt
  pack
}
q P-s4 4 gpuio-P
q main 1 gpuio-main
q P-s1 1 gpuio-P
q P-s8 8 gpuio-P
q P-s4b 4 gpuio-P
t0=$(date +%s)
timeout 150 $S/gpuio-P selftest --backend cuda > $R/selftest-P.log 2>&1
echo "== selftest P rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
grep -E "passed|FAIL" $R/selftest-P.log | tail -5 >> $R/summary.txt
(cd /tmp/gc && tar czf $OUT/gcache.tgz gcache)
pack
cat $R/summary.txt
