#!/bin/bash
# run 190: cfbe35f on the GPU: gpuio selftest --backend cuda; the forward cases again
# with two forwarders per channel of several rings (GPUIO_FORWARD_FORWARDERS=2), and on
# 1024 x 1 MiB with 4; whole-device NOPs with 4 forwarders.
export XDG_CACHE_HOME=/tmp/gc
R=$OUT/r; mkdir -p $R
H=.gpucheck/s9/h/gpuio
{ date -u; nvidia-smi -L; uname -r; } > $R/gpu.txt 2>&1
timeout 200 $H selftest --backend cuda > $R/selftest.log 2>&1; echo "selftest rc $?" >> $R/rc.txt
GPUIO_FORWARD_FORWARDERS=2 timeout 120 $H selftest --backend cuda/forward > $R/selftest-f2.log 2>&1; echo "selftest-f2 rc $?" >> $R/rc.txt
GPUIO_FORWARD_FORWARDERS=4 timeout 60 $H run .gpucheck/s9/p/nops.cu --backend cuda/forward --grid 132 --block 1024 --slots 1024 --slot-size 1048576 --arg 16 --arg 0 --arg 0xffffffffffffffff --arg 0 > $R/nops-f4.log 2>&1; echo "nops-f4 rc $?" >> $R/rc.txt
(cd $OUT && tar czf r.tgz r)
