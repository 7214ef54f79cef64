#!/bin/bash
# Session 2026-11-28e, call 5: (a) one host thread writing 4224 x 1 MiB into a fresh file in order vs shuffled;
# (b) the io-wq workers' kernel stacks sampled during forward's bulk passes (84a2910).
S=./bin/m24
mkdir -p /tmp/gc; export XDG_CACHE_HOME=/tmp/gc
R=$OUT/r; mkdir -p $R
pack() { (cd $OUT && tar czf r.tgz r); }
t0=$(date +%s)
gcc -O2 -o /tmp/ord $S/ord.c && for i in 1 2 3; do /tmp/ord 4224 0 /tmp/ord.bin; /tmp/ord 4224 1 /tmp/ord.bin; done > $R/order.txt 2>&1
echo "== order $(( $(date +%s)-t0 )) s" >> $R/summary.txt; cat $R/order.txt >> $R/summary.txt
pack
$S/gpuio bench --only bulk --backend cuda/forward --repeats 1 > $R/bulk.log 2> >(python3 -u -c 'import sys,time
t0=time.time()
for l in sys.stdin: sys.stdout.write("%.2f %s" % (time.time()-t0, l))' > $R/bulk.err) &
B=$!
P=$B
timeout 100 python3 $S/sample.py $P $R/stacks.txt &
wait $B; echo "== bulk rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
wait
pack; cat $R/summary.txt
