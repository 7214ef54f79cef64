#!/bin/bash
# Session 2026-11-28d, call 3: (a) wall time of `bench --quick --json` with the bulk passes of
# --quick one warp per SM and the naive ring bounded (new); (b) forward's bulk with every
# forwarder's io-wq sharing the anchor ring's hash map (new) against base (6e8a3b7 + the quick
# change of the naive ring only), full scale, one repeat, interleaved.
S=./bin
mkdir -p /tmp/gc; export XDG_CACHE_HOME=/tmp/gc
R=$OUT/r; mkdir -p $R
pack() { (cd $OUT && tar czf r.tgz r); }
T0=$(date +%s)
left() { echo $(( 560 - ($(date +%s) - T0) )); }
t0=$(date +%s.%N)
timeout 150 $S/gpuio-new bench --quick --json 2> >(while IFS= read -r l; do printf '%7.1f %s\n' "$(awk -v a=$(date +%s.%N) -v b=$t0 'BEGIN{print a-b}')" "$l"; done > $R/quick.err) > $R/quick.json
rc=$?
echo "== quick rc=$rc $(awk -v a=$(date +%s.%N) -v b=$t0 'BEGIN{print a-b}') s" >> $R/summary.txt
pack
bulk() { # tag binary backend
  local name=$1 bin=$2 be=$3
  local l=$(left); [ $l -lt 60 ] && { echo "== skip $name ($l s left)" >> $R/summary.txt; return; }
  local lim=$(( l < 110 ? l : 110 ))
  local t0=$(date +%s)
  timeout $lim $S/gpuio-$bin bench --only bulk --backend $be --repeats 1 > $R/bulk-$name.log 2>&1
  echo "== bulk $name ($bin $be) rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
  sed 's/\x1b\[[0-9;]*m//g' $R/bulk-$name.log | grep -A10 -E "^  forward: 1 MiB p(write|read)" | grep -E "forward: 1 MiB|host CPU|^      also vs one host thread, p(write|read) of the same ranges, buffers" | cut -c1-230 >> $R/summary.txt
  pack
}
bulk base1 base cuda/forward
bulk new1 new cuda/forward
bulk base2 base cuda/forward
bulk new2 new cuda/forward
cat $R/summary.txt
