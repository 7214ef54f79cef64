#!/bin/bash
# run 189: candidate c2 (GPUIO_FORWARD_FORWARDERS: fewer forwarder threads than rings,
# each serving consecutive rings with an io_uring as deep as its entries): whole-device
# NOPs on 1024 x 1 MiB (16 rings) with 4 / 16 forwarders; the bulk figures with 4 and
# 16, interleaved after a throwaway pass.
export XDG_CACHE_HOME=/tmp/gc
R=$OUT/r; mkdir -p $R
M=.gpucheck/s9/c2/gpuio; P=.gpucheck/s9/p
nops() { # forwarders tag
  GPUIO_FORWARD_FORWARDERS=$1 GPUIO_LOG=gpuio_core::forward=debug timeout 60 $M run $P/nops.cu --backend cuda/forward --grid 132 --block 1024 --slots 1024 --slot-size 1048576 --arg 16 --arg 0 --arg 0xffffffffffffffff --arg 0 > $R/nops-$2.log 2>&1
  echo "$2 rc $?" >> $R/rc.txt
}
for round in 1 2; do nops 4 f4-$round; nops 16 f16-$round; nops 8 f8-$round; done
bulk() { GPUIO_FORWARD_FORWARDERS=$1 timeout 150 $M bench --backend cuda/forward --only bulk --repeats 1 > $R/bulk-$2.log 2> $R/bulk-$2.err; echo "bulk-$2 rc $?" >> $R/rc.txt; }
bulk 16 throwaway
bulk 4 f4-1
bulk 16 f16-1
bulk 16 f16-2
bulk 4 f4-2
(cd $OUT && tar czf r.tgz r)
