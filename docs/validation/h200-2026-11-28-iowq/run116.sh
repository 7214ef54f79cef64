#!/bin/bash
# Session 2026-11-28d, call 5: the committed build 71f3e6b (forward io-wq groups of 4 by default;
# --quick bounded): selftest on cuda, bench --quick --json wall time, then forward's bulk twice.
S=./bin
mkdir -p /tmp/gc; export XDG_CACHE_HOME=/tmp/gc
R=$OUT/r; mkdir -p $R
pack() { (cd $OUT && tar czf r.tgz r); }
t0=$(date +%s)
timeout 150 $S/gpuio selftest --backend cuda > $R/selftest.log 2>&1
echo "== selftest rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
tail -1 $R/selftest.log >> $R/summary.txt; grep -E "^FAIL|^fail" $R/selftest.log | head >> $R/summary.txt; pack
t0=$(date +%s.%N)
timeout 120 $S/gpuio bench --quick --json 2> >(while IFS= read -r l; do printf '%7.1f %s\n' "$(awk -v a=$(date +%s.%N) -v b=$t0 'BEGIN{print a-b}')" "$l"; done > $R/quick.err) > $R/quick.json
echo "== quick rc=$? $(awk -v a=$(date +%s.%N) -v b=$t0 'BEGIN{print a-b}') s" >> $R/summary.txt
sleep 1; pack
for i in 1 2; do
  t0=$(date +%s)
  timeout 100 $S/gpuio bench --only bulk --backend cuda/forward --repeats 1 > $R/bulk-f$i.log 2>&1
  echo "== bulk f$i rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
  sed 's/\x1b\[[0-9;]*m//g' $R/bulk-f$i.log | grep -A10 -E "^  forward: 1 MiB p(write|read), whole" | grep -E "forward: 1 MiB|host CPU" | cut -c1-200 >> $R/summary.txt
  pack
done
cat $R/summary.txt
