#!/bin/bash
# Session 2026-11-26 pm, call 3: forward rings 4 (default) / 8 for the whole-device
# NOP and small-op figures, binary F (a28425b).
S=./.gpucheck/m
mkdir -p /tmp/gc && cp -r .gpucheck/gc/gcache /tmp/gc/ 2>/dev/null
export XDG_CACHE_HOME=/tmp/gc/gcache
R=$OUT/r; mkdir -p $R
i=0
for rings in 4 8 4 8; do
  i=$((i+1)); t0=$(date +%s)
  GPUIO_FORWARD_RINGS=$rings timeout 100 $S/gpuio-F bench --only requests --backend cuda/forward --repeats 1 > $R/fwd-$i-$rings.txt 2> $R/fwd-$i-$rings.err
  echo "== forward rings $rings rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
  grep -E "NOPs|64 B pread, whole|4096 B pread, whole|1 MiB pread, whole device, one file " $R/fwd-$i-$rings.txt >> $R/summary.txt
done
cat $R/summary.txt
