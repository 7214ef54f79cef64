#!/bin/bash
# run 183: (1) whole-device NOPs on 16 rings of 64 slots: 16 forwarders on 4 CPUs, on 8
# CPUs, against 4 forwarders (GPUIO_X_RINGS_PER_FORWARDER=4); (2) the bulk figures with
# 4 forwarders serving the 16 rings against 16, interleaved after a throwaway pass.
export XDG_CACHE_HOME=/tmp/gc
R=$OUT/r; mkdir -p $R
M=.gpucheck/s9/m3/gpuio; P=.gpucheck/s9/p
nops() { # slots slot_size env tag [taskset cpus]
  local ts=""; [ -n "$5" ] && ts="taskset -c $5"
  env $3 GPUIO_LOG=gpuio_core::forward=debug timeout 60 $ts $M run $P/nops.cu --backend cuda/forward --grid 132 --block 1024 --slots $1 --slot-size $2 --arg 16 --arg 0 --arg 0xffffffffffffffff --arg 0 > $R/nops-$4.log 2>&1
  echo "$4 rc $?" >> $R/rc.txt
}
for round in 1 2; do
  nops 1024 1048576 X=1 r16-cpu4-$round 0-3
  nops 1024 1048576 X=1 r16-cpu8-$round 0-7
  nops 1024 1048576 X=1 r16-$round
  nops 1024 1048576 GPUIO_X_RINGS_PER_FORWARDER=4 r16-k4-$round
  nops 1024 1048576 GPUIO_X_RINGS_PER_FORWARDER=4 r16-k4-cpu4-$round 0-3
done
bulk() { env $1 timeout 150 $M bench --backend cuda/forward --only bulk --repeats 1 > $R/bulk-$2.log 2> $R/bulk-$2.err; echo "bulk-$2 rc $?" >> $R/rc.txt; }
bulk X=1 throwaway
bulk GPUIO_X_RINGS_PER_FORWARDER=4 k4-1
bulk X=1 k1-1
bulk X=1 k1-2
bulk GPUIO_X_RINGS_PER_FORWARDER=4 k4-2
(cd $OUT && tar czf r.tgz r)
