#!/bin/bash
# Validation of main after the merges (sockets SEND/RECV, hostile cases, queue polls,
# default printf log of 32 rings): selftest, the whole bench once, printf flood.
S=./.gpucheck/s
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv > $R/machine.txt 2>&1; uname -r >> $R/machine.txt; nproc >> $R/machine.txt
timeout 420 $S/gpuio-E selftest > $R/selftest.log 2>&1
echo "== selftest rc=$?" >> $OUT/summary.txt
tail -1 $R/selftest.log >> $OUT/summary.txt
grep -E "^(FAIL|fail)|^skip (cuda|cpu)" $R/selftest.log | head -20 >> $OUT/summary.txt
for i in 1 2; do
  timeout 120 $S/gpuio-E run $S/printf_flood.cu --grid 132 --block 1024 --arg 16 --params 4 > /tmp/flood.txt 2> $R/flood-$i.err
  echo "== printf flood default log rc=$? lines=$(wc -l < /tmp/flood.txt) distinct=$(sort -u /tmp/flood.txt | wc -l)" >> $OUT/summary.txt
  grep -E "M lines/s" $R/flood-$i.err >> $OUT/summary.txt
  rm -f /tmp/flood.txt
done
timeout 150 $S/gpuio-E bench --repeats 1 --json --plot $R/bench.svg > $R/bench.json 2> $R/bench.err
echo "== bench rc=$?" >> $OUT/summary.txt
tail -5 $R/bench.err >> $OUT/summary.txt
cd $OUT && tar czf r.tgz r && rm -rf r
