#!/bin/bash
# Session 2026-11-28d, call 2: (a) wall time of `bench --quick --json` with the naive ring bounded
# for --quick; (b) direct's write gate taken before the copy into staging (gf1 depth 1, gf2 depth 2;
# experiment builds of run111-gate-first.patch) against base, full-scale bulk, one repeat;
# (c) forward's one-file bulk with 16 / 4 / 1 rings (GPUIO_FORWARD_RINGS).
S=./bin
mkdir -p /tmp/gc; export XDG_CACHE_HOME=/tmp/gc
R=$OUT/r; mkdir -p $R
pack() { (cd $OUT && tar czf r.tgz r); }
T0=$(date +%s)
left() { echo $(( 560 - ($(date +%s) - T0) )); }
{ findmnt -T /tmp; df -T /tmp; lscpu | head -25; free -g; uname -r; nvidia-smi -q | grep -iE "link|gen|width" | head -12; } > $R/machine.txt 2>&1
t0=$(date +%s.%N)
timeout 150 $S/gpuio-base bench --quick --json 2> >(while IFS= read -r l; do printf '%7.1f %s\n' "$(awk -v a=$(date +%s.%N) -v b=$t0 'BEGIN{print a-b}')" "$l"; done > $R/quick.err) > $R/quick.json
rc=$?
echo "== quick rc=$rc $(awk -v a=$(date +%s.%N) -v b=$t0 'BEGIN{print a-b}') s" >> $R/summary.txt
pack
bulk() { # name backend env...
  local name=$1 be=$2; shift 2
  local l=$(left); [ $l -lt 60 ] && { echo "== skip $name ($l s left)" >> $R/summary.txt; return; }
  local lim=$(( l < 110 ? l : 110 ))
  local t0=$(date +%s)
  env "$@" timeout $lim $S/gpuio-${name%%-*} bench --only bulk --backend $be --repeats 1 > $R/bulk-$name.log 2>&1
  echo "== bulk $name ($be $*) rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
  sed 's/\x1b\[[0-9;]*m//g' $R/bulk-$name.log | grep -A1 -E "^  (direct|forward): 1 MiB pwrite(,| from the staging)" | cut -c1-200 >> $R/summary.txt
  sed 's/\x1b\[[0-9;]*m//g' $R/bulk-$name.log | grep -A9 -E "^  (direct|forward): 1 MiB pwrite, whole device, one file " | grep "host CPU" | cut -c1-220 >> $R/summary.txt
  pack
}
bulk base cuda/direct X=1
bulk gf2 cuda/direct X=1
bulk gf1 cuda/direct X=1
bulk base-f16 cuda/forward GPUIO_FORWARD_RINGS=16
bulk base-f1 cuda/forward GPUIO_FORWARD_RINGS=1
bulk base-f4 cuda/forward GPUIO_FORWARD_RINGS=4
bulk gf2-again cuda/direct X=1
cat $R/summary.txt
