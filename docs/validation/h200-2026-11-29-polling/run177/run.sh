#!/bin/bash
# run 177: first-touch (host), bulk with the warm-up first on a fresh machine,
# selftest (a; nb = ballot removed, forward only), forward NOP latency modes by CPU.
export XDG_CACHE_HOME=/tmp/gc
R=$OUT/r; mkdir -p $R
A=.gpucheck/s9/a/gpuio; NB=.gpucheck/s9/nb/gpuio
{ date -u; nvidia-smi -L; nproc; lscpu | grep -E "Model name|NUMA|Socket|Core|Thread|L3"; numactl -H 2>/dev/null | head -4; free -g; lscpu -e; } > $R/gpu.txt 2>&1
timeout 200 $A bench --backend cuda/forward --only bulk --repeats 1 > $R/bulk1.log 2> $R/bulk1.err; echo "bulk1 rc $?" >> $R/rc.txt
timeout 200 $A bench --backend cuda/forward --only bulk --repeats 1 > $R/bulk2.log 2> $R/bulk2.err; echo "bulk2 rc $?" >> $R/rc.txt
timeout 60 python3 .gpucheck/s9/touch.py 4 3 > $R/touch.log 2>&1; echo "touch rc $?" >> $R/rc.txt
timeout 200 $A selftest --backend cuda > $R/selftest-a.log 2>&1; echo "selftest-a rc $?" >> $R/rc.txt
timeout 120 $NB selftest --backend cuda/forward > $R/selftest-nb.log 2>&1; echo "selftest-nb rc $?" >> $R/rc.txt
for i in 1 2; do timeout 60 $A bench --only latency --backend cuda/forward --repeats 3 > $R/lat-free-$i.log 2>&1; echo "lat-free-$i rc $?" >> $R/rc.txt; done
for c in 0 4 8 12; do timeout 60 taskset -c $c,$((c+1)) $A bench --only latency --backend cuda/forward --repeats 3 > $R/lat-cpu$c.log 2>&1; echo "lat-cpu$c rc $?" >> $R/rc.txt; done
(cd $OUT && tar czf r.tgz r)
