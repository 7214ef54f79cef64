#!/bin/bash
# Session 2026-11-26 (night), call 2: where the to-host send kernel's time goes
# (ncu, kernel replay: passes after the first find every ring free, so they time the
# device's side alone), the selftest on warm caches, and the whole bench (3 repeats).
S=./.gpucheck/m
mkdir -p /tmp/gc && cp -r .gpucheck/gc/gcache /tmp/gc/ 2>/dev/null
rm -f /tmp/gc/gcache/calibration.json
export XDG_CACHE_HOME=/tmp/gc/gcache
R=$OUT/r; mkdir -p $R
pack() { (cd $OUT && tar czf r.tgz r); (cd /tmp/gc && tar czf $OUT/gcache.tgz gcache); }
t0=$(date +%s)
GPUIO_BENCH_QUEUE_SIZES=64 timeout 200 ncu --clock-control none --kernel-name gpuio_k_queue_send --launch-skip 1 --launch-count 1 --set full --import-source no -o $R/qsend $S/gpuio-head bench --only queues --backend cuda --repeats 1 > $R/ncu-run.log 2>&1
echo "== ncu rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
ncu -i $R/qsend.ncu-rep --page details > $R/ncu-details.txt 2>&1
ncu -i $R/qsend.ncu-rep --page source --csv --print-source sass > $R/ncu-sass.csv 2>&1
ncu -i $R/qsend.ncu-rep --page raw --csv > $R/ncu-raw.csv 2>&1
grep -E "Duration|Issue Slots Busy|No Eligible|Warp Cycles Per Issued|Stall|Throughput|Executed Ipc" $R/ncu-details.txt | head -40 >> $R/summary.txt
pack
t0=$(date +%s)
timeout 150 $S/gpuio-head selftest --backend cuda > $R/selftest.log 2>&1
echo "== selftest head rc=$? $(( $(date +%s)-t0 )) s; $(grep -c '^ok' $R/selftest.log) ok, $(grep -c '^FAIL\|^fail' $R/selftest.log) failed" >> $R/summary.txt
grep -v "^ok\|^skip" $R/selftest.log | tail -5 >> $R/summary.txt
pack
t0=$(date +%s)
timeout 330 $S/gpuio-head bench --repeats 3 > $R/bench.log 2>&1
echo "== bench rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
pack
cat $R/summary.txt
