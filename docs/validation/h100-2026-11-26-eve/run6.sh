#!/bin/bash
# Session 2026-11-26 evening, call 6: where a warp's 1 MiB read's time goes
# (bulksteps.cu: the steps of gpuio_pread_warp timed one by one), 132 x 1024 threads,
# binary S = 95674b3.
S=./.gpucheck/m
mkdir -p /tmp/gc && cp -r .gpucheck/gc/gcache /tmp/gc/ 2>/dev/null
rm -f /tmp/gc/gcache/calibration.json
export XDG_CACHE_HOME=/tmp/gc/gcache
R=$OUT/r; mkdir -p $R
pack() { (cd $OUT && tar czf r.tgz r); }
t0=$(date +%s)
head -c 9G /dev/zero > /tmp/big.bin; cat /tmp/big.bin > /dev/null
echo "== file $(( $(date +%s)-t0 )) s; df: $(df -h /tmp | tail -1)" >> $R/summary.txt
i=0
b() { # name pair slots slot_size chunk per [env]
  i=$((i+1)); t0=$(date +%s)
  env ${7:-X=1} timeout 100 $S/gpuio-S run --backend $2 --grid 132 --block 1024 --slots $3 --slot-size $4 \
    --file data=/tmp/big.bin:r --params 12 --arg 0 --arg $5 --arg $6 .gpucheck/k/bulksteps.cu > $R/b$i-$1.log 2>&1
  echo "== b$i $1 ($2 slots $3 x $4, chunk $5 x $6, ${7:-}) rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
  grep -E "finished in|params:|channel:" $R/b$i-$1.log >> $R/summary.txt
  pack
}
b warm cuda/forward 256 1048576 1048576 1
b fwd-1M cuda/forward 256 1048576 1048576 1
b fwd-1Mx2 cuda/forward 256 1048576 1048576 2
b fwd-256K cuda/forward 1024 262144 262144 4
b mb-1M cuda/mailbox 256 1048576 1048576 1
b fwd-1M-r8 cuda/forward 512 1048576 1048576 1 GPUIO_FORWARD_RINGS=8
b fwd-1M-again cuda/forward 256 1048576 1048576 1
rm -f /tmp/big.bin
pack
cat $R/summary.txt
