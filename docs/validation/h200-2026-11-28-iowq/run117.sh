#!/bin/bash
# Session 2026-11-28d, call 6: does sharing io-wq hash maps by fours (71f3e6b's default) cost the
# small requests? `bench --only requests --backend cuda/forward --repeats 1` with
# GPUIO_FORWARD_WQ_SHARE=0 (each forwarder its own) against the default, interleaved.
S=./bin
mkdir -p /tmp/gc; export XDG_CACHE_HOME=/tmp/gc
R=$OUT/r; mkdir -p $R
pack() { (cd $OUT && tar czf r.tgz r); }
T0=$(date +%s)
left() { echo $(( 380 - ($(date +%s) - T0) )); }
rq() { # tag share
  local l=$(left); [ $l -lt 50 ] && { echo "== skip $1 ($l s left)" >> $R/summary.txt; return; }
  local lim=$(( l < 120 ? l : 120 ))
  local t0=$(date +%s)
  GPUIO_FORWARD_WQ_SHARE=$2 timeout $lim $S/gpuio bench --only requests --backend cuda/forward --repeats 1 > $R/rq-$1.log 2>&1
  echo "== rq $1 (share $2) rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
  sed 's/\x1b\[[0-9;]*m//g' $R/rq-$1.log | grep -E "forward: (NOPs|64 B|4096 B|1 MiB)[^,]*, whole device|forward: pwrite 1 B|write \+ read" | cut -c1-150 >> $R/summary.txt
  pack
}
rq s4a 4; rq s0a 0; rq s4b 4; rq s0b 0; rq s4c 4; rq s0c 0
cat $R/summary.txt
