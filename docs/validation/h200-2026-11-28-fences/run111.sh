#!/bin/bash
# Session 2026-11-28c, call 5 (run 111): direct's write gate taken before the warp copies its chunk into
# staging (gf1: depth 1, gf2: depth 2; experiment builds) against eae7c1a (base), quick bulk.
S=./.gpucheck/m5
mkdir -p /tmp/gc; export XDG_CACHE_HOME=/tmp/gc
R=$OUT/r; mkdir -p $R
pack() { (cd $OUT && tar czf r.tgz r); }
bulk() { # name
  local t0=$(date +%s)
  timeout 75 $S/gpuio-$1 bench --quick --only bulk --backend cuda/direct --repeats 2 > $R/bulk-$1.log 2>&1
  echo "== bulk $1 rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
  sed 's/\x1b\[[0-9;]*m//g' $R/bulk-$1.log | grep -A1 -E "^  direct: 1 MiB pwrite(,| from the staging)" | cut -c1-200 >> $R/summary.txt
  pack
}
bulk base; bulk gf1; bulk gf2
cat $R/summary.txt
