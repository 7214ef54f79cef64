#!/bin/bash
# run 178: forward NOP latency by SM (latsm.cu), two launches; the mailbox's too.
export XDG_CACHE_HOME=/tmp/gc
R=$OUT/r; mkdir -p $R
A=.gpucheck/s9/a/gpuio
for t in forward forward mailbox; do
  timeout 60 $A run .gpucheck/s9/p/latsm.cu --backend cuda/$t --grid 132 --block 32 --arg 2000 --params 540 > $R/latsm-$t.out 2>> $R/latsm-$t.err; echo "latsm-$t rc $?" >> $R/rc.txt
done
timeout 60 $A bench --only latency --backend cuda/forward --repeats 3 > $R/lat.log 2>&1; echo "lat rc $?" >> $R/rc.txt
(cd $OUT && tar czf r.tgz r)
