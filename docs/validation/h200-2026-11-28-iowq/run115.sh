#!/bin/bash
# Session 2026-11-28d, call 4: forward bulk with the forwarders' io-wqs sharing a hash map in
# groups: all 16 (exp default), groups of 4 (GPUIO_EXP_WQ_GROUP=4), none (base binary);
# two interleaved rounds, full scale, one repeat. Then direct base vs gf2 (gate before the copy).
S=./bin
mkdir -p /tmp/gc; export XDG_CACHE_HOME=/tmp/gc
R=$OUT/r; mkdir -p $R
pack() { (cd $OUT && tar czf r.tgz r); }
T0=$(date +%s)
left() { echo $(( 540 - ($(date +%s) - T0) )); }
bulk() { # tag binary backend env...
  local name=$1 bin=$2 be=$3; shift 3
  local l=$(left); [ $l -lt 60 ] && { echo "== skip $name ($l s left)" >> $R/summary.txt; return; }
  local lim=$(( l < 110 ? l : 110 ))
  local t0=$(date +%s)
  env "$@" timeout $lim $S/gpuio-$bin bench --only bulk --backend $be --repeats 1 > $R/bulk-$name.log 2>&1
  echo "== bulk $name ($bin $be $*) rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
  sed 's/\x1b\[[0-9;]*m//g' $R/bulk-$name.log | grep -A10 -E "^  (forward|direct): 1 MiB pwrite" | grep -E "(forward|direct): 1 MiB|host CPU|^      also vs one host thread, pwrite of the same ranges, buffers" | cut -c1-230 >> $R/summary.txt
  pack
}
bulk base1 base cuda/forward X=1
bulk all1 exp cuda/forward X=1
bulk g4-1 exp cuda/forward GPUIO_EXP_WQ_GROUP=4
bulk base2 base cuda/forward X=1
bulk all2 exp cuda/forward X=1
bulk g4-2 exp cuda/forward GPUIO_EXP_WQ_GROUP=4
bulk dbase base cuda/direct X=1
bulk dgf2 gf2 cuda/direct X=1
cat $R/summary.txt
