#!/bin/bash
# Call 4: why per-ring counters (ctr) fall at 1024 slots / 16 rings; peer = ctr + peers back off like the lead.
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
  nops ctr1024r16-$rep ctr 1024 16
  nops peer1024r16-$rep peer 1024 16
  nops ctr1024r8-$rep ctr 1024 8
  nops peer1024r8-$rep peer 1024 8
  nops ctr1024r4-$rep ctr 1024 4
  nops ctr256-$rep ctr 256 16
  nops peer256-$rep peer 256 16
  nops main256-$rep main 256 16
done
grep -h "forwarder stopped" $R/n-ctr1024r16-1.log | sed 's/^.*forwarder stopped/ctr r16:/' | head -16 >> $R/summary.txt
grep -h "forwarder stopped" $R/n-peer1024r16-1.log | sed 's/^.*forwarder stopped/peer r16:/' | head -16 >> $R/summary.txt
grep -h "forwarder stopped" $R/n-ctr256-1.log | sed 's/^.*forwarder stopped/ctr 256:/' | head -4 >> $R/summary.txt
pack
for b in peer; do
  left=$(( T0 + 400 - $(date +%s) )); [ $left -lt 60 ] && break
  t0=$(date +%s)
  timeout $left $S/gpuio-$b bench --only requests --backend cuda/forward --repeats 3 > $R/req-$b.log 2>&1
  echo "== requests $b rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
  grep -E "^  forward" $R/req-$b.log >> $R/summary.txt
  pack
done
cat $R/summary.txt
