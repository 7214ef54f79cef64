#!/bin/bash
R=$OUT/r; mkdir -p $R; export XDG_CACHE_HOME=/tmp/gc
gcc -O2 -o /tmp/sqpollnop .gpucheck/p4/sqpollnop.c 2> $R/gcc.txt || { cat $R/gcc.txt; exit 1; }
for i in 1 2; do
for a in "2000000 256 1 256" "2000000 256 1 1024" "2000000 1024 1 1024" "2000000 64 1 256" "2000000 256 0 256"; do
  timeout 60 /tmp/sqpollnop $a 2>&1 | tee -a $R/sqpollnop.txt
done
timeout 90 ./.gpucheck/m13/gpuio run .gpucheck/p2/nops.cu --backend cuda/direct --grid 132 --block 1024 --arg 16 --arg 0 --arg 0xffffffffffffffff --arg 0 --timeout 60 > $R/direct-$i.log 2>&1
echo "== direct 132x1024x16 (256 slots): $(grep -E 'finished' $R/direct-$i.log)"
done
(cd $OUT && tar czf r.tgz r)
