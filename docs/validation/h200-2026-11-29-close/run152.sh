#!/bin/bash
R=$OUT/r; mkdir -p $R; export XDG_CACHE_HOME=/tmp/gc
S=.gpucheck/s6
for n in 8 4 16; do
  GPUIO_LOG=gpuio_core::forward=debug GPUIO_FORWARD_RINGS=$n timeout 90 $S/new/gpuio run $S/p/nops.cu --backend cuda/forward --grid 132 --block 1024 --slots 1024 --arg 16 --arg 0 --arg 0xffffffffffffffff --arg 0 > $R/dbg-f$n.log 2>&1
  echo "== rings $n: $(grep -E 'finished' $R/dbg-f$n.log | tail -1)"; grep -E "forwarder stopped" $R/dbg-f$n.log | sed -E 's/^.*forwarder stopped//' | head -16
done
(cd $OUT && tar czf r.tgz r)
