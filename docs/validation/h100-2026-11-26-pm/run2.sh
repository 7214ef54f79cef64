#!/bin/bash
# Session 2026-11-26 pm, call 2: C = 38f9af0 (credits), F = credits + free words apart
# from the cells (and cell offsets by mask); then F's selftest and whole bench.
S=./.gpucheck/m
mkdir -p /tmp/gc && cp -r .gpucheck/gc/gcache /tmp/gc/ 2>/dev/null
export XDG_CACHE_HOME=/tmp/gc/gcache
R=$OUT/r; mkdir -p $R
pack() { (cd $OUT && tar czf r.tgz r); }
i=0
for bin in C F F C; do
  i=$((i+1)); t0=$(date +%s)
  timeout 200 $S/gpuio-$bin bench --only queues --repeats 1 > $R/q-$i-$bin.txt 2> $R/q-$i-$bin.err
  echo "== queues $bin rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
  grep -E "B: .*msg/s; the host|B: .*msg/s; kernel" $R/q-$i-$bin.err >> $R/summary.txt
  pack
done
t0=$(date +%s)
timeout 300 $S/gpuio-F selftest --backend cuda > $R/selftest-F.txt 2> $R/selftest-F.err
echo "== selftest F rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
tail -3 $R/selftest-F.txt >> $R/summary.txt
pack
t0=$(date +%s)
timeout 420 $S/gpuio-F bench --repeats 3 --plot $R/bench-F.svg > $R/bench-F.txt 2> $R/bench-F.err
echo "== bench F rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
grep -E "NOP|whole device|queue to|printf|1 MiB|idle" $R/bench-F.txt | head -80 >> $R/summary.txt
pack
cat $R/summary.txt
