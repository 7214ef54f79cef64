#!/bin/bash
# run 191: one thread's forward NOPs filed by the 4 KiB page of their entry
# (latpage.cu): one ring of 256 slots (4 pages) and of 1024 (16 pages), a few launches.
export XDG_CACHE_HOME=/tmp/gc
R=$OUT/r; mkdir -p $R
H=.gpucheck/s9/h/gpuio; P=.gpucheck/s9/p
for i in 1 2 3; do
  GPUIO_FORWARD_RINGS=1 timeout 30 $H run $P/latpage.cu --backend cuda/forward --arg 8000 --params 60 > $R/page-s256-$i.log 2>&1; echo "s256-$i rc $?" >> $R/rc.txt
  GPUIO_FORWARD_RINGS=1 timeout 30 $H run $P/latpage.cu --backend cuda/forward --slots 1024 --arg 16000 --params 60 > $R/page-s1024-$i.log 2>&1; echo "s1024-$i rc $?" >> $R/rc.txt
done
timeout 60 $H bench --only latency --backend cuda/forward --repeats 3 > $R/lat.log 2>&1; echo "lat rc $?" >> $R/rc.txt
(cd $OUT && tar czf r.tgz r)
