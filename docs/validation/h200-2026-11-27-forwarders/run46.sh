#!/bin/bash
# Call 5: spin = per-ring counters + host threads spin/yield 200 us before sleeping. Against ctr and main.
S=./.gpucheck/m
T0=$(date +%s)
mkdir -p /tmp/gc/gcache; cp -r .gpucheck/gc/gcache/. /tmp/gc/gcache/ 2>/dev/null
export XDG_CACHE_HOME=/tmp/gc/gcache
R=$OUT/r; mkdir -p $R
pack() { (cd $OUT && tar czf r.tgz r); tar czf $OUT/gcache.tgz -C /tmp/gc gcache; }
nops() { # name binary slots rings
  t0=$(date +%s)
  GPUIO_FORWARD_RINGS=$4 GPUIO_LOG=warn,gpuio_core::forward::forwarder=debug timeout 60 $S/gpuio-$2 run nops.cu --backend cuda/forward --grid 132 --block 1024 --slots $3 --arg 16 --arg 0 > $R/n-$1.log 2>&1
  echo "== nops $1 ($2 slots $3 rings $4) rc=$? $(( $(date +%s)-t0 )) s: $(grep -o 'finished in.*' $R/n-$1.log)" >> $R/summary.txt
}
for rep in 1 2; do
  nops spin1024r16-$rep spin 1024 16
  nops ctr1024r16-$rep ctr 1024 16
  nops spin1024r8-$rep spin 1024 8
  nops spin256-$rep spin 256 16
  nops ctr256-$rep ctr 256 16
  nops main256-$rep main 256 16
  nops main1024r16-$rep main 1024 16
done
grep -h "forwarder stopped" $R/n-spin1024r16-1.log | sed 's/^.*forwarder stopped/spin r16:/' | head -4 >> $R/summary.txt
pack
bench() { # name args...
  local n=$1; shift
  left=$(( T0 + 450 - $(date +%s) )); [ $left -lt 30 ] && return
  t0=$(date +%s)
  timeout $left $S/gpuio-spin "$@" > $R/$n.log 2>&1
  echo "== $n rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
  grep -E "^  " $R/$n.log >> $R/summary.txt
  pack
}
bench req-forward bench --only requests --backend cuda/forward --repeats 3
GPUIO_BENCH_QUEUE_SIZES=64,4096 bench queues bench --only queues --backend cuda --repeats 3
bench req-mailbox bench --only requests --backend cuda/mailbox --repeats 3
bench req-direct bench --only requests --backend cuda/direct --repeats 3
bench selftest selftest --backend cuda
tail -2 $R/selftest.log >> $R/summary.txt
cat $R/summary.txt
