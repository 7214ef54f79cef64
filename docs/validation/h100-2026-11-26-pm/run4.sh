#!/bin/bash
# Session 2026-11-26 pm, call 4: whole-device NOPs (132 x 1024 threads x 4 NOPs) by
# `gpuio run` with 256 (default) / 1024 request slots, binary F (a28425b).
S=./.gpucheck/m
mkdir -p /tmp/gc && cp -r .gpucheck/gc/gcache /tmp/gc/ 2>/dev/null
export XDG_CACHE_HOME=/tmp/gc/gcache
R=$OUT/r; mkdir -p $R
i=0
for pair in forward forward forward forward forward forward mailbox mailbox; do
  i=$((i+1))
  case $i in 1|3|5|7) slots=256;; 2|4|6) slots=1024;; 8) slots=1024;; esac
  [ $i -ge 5 ] && [ $i -le 6 ] && slots=$([ $i = 5 ] && echo 4096 || echo 256)
  t0=$(date +%s)
  timeout 200 $S/gpuio-F run --backend cuda/$pair --grid 132 --block 1024 --arg 4 --arg 0 --slots $slots .gpucheck/k/nops.cu > $R/nops-$i-$pair-$slots.txt 2> $R/nops-$i-$pair-$slots.err
  echo "== $pair slots $slots rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
  grep -E "finished in|params|channel:" $R/nops-$i-$pair-$slots.err >> $R/summary.txt
done
cat $R/summary.txt
