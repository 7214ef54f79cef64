#!/bin/bash
# Call 7 of 2026-11-26: H = main with the printf figure ending when the lines are in
# the file (CloseReport::logs_elapsed). Requests on every pair (printf figures),
# then the queues (the idle channel with ring 0's forwarder leading).
S=./.gpucheck/m
mkdir -p /tmp/gc && cp -r .gpucheck/gc/gcache /tmp/gc/ 2>/dev/null
export XDG_CACHE_HOME=/tmp/gc/gcache
R=$OUT/r; mkdir -p $R
pack() { (cd $OUT && tar czf r.tgz r); }
for pair in forward mailbox direct; do
  t0=$(date +%s)
  timeout 200 $S/gpuio-H bench --only requests --backend cuda/$pair --repeats 1 > $R/req-H-$pair.txt 2> $R/req-H-$pair.err
  echo "== requests H $pair rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
  grep -E "printf|lost" $R/req-H-$pair.txt >> $R/summary.txt
  pack
done
t0=$(date +%s)
timeout 120 $S/gpuio-H bench --only queues --repeats 3 > $R/q-H.txt 2> $R/q-H.err
echo "== queues H rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
grep -E "idle|msg/s" $R/q-H.txt >> $R/summary.txt
pack
cat $R/summary.txt
