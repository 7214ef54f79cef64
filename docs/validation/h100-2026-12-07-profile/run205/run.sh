#!/bin/bash
# run 205: gpuio-b = ae3eba3 + a launch whose block exceeds the kernel's bound (GPUIO_MAX_BLOCK) is an error naming it.
R=$OUT/r; mkdir -p $R; export XDG_CACHE_HOME=/tmp/gc
S=.gpucheck/s16; B=$S/h/gpuio-b
nvidia-smi -q | grep -i -E "Product Name|Driver Version" | head -3 > $R/gpu.txt; date -u > $R/uname.txt
for b in 256 512 1024; do timeout 30 $B run $S/p/bound.cu --backend cuda/forward --grid 2 --block $b > $R/bound-$b.out 2> $R/bound-$b.err; echo "block $b rc $?: $(cat $R/bound-$b.out) $(grep -i -E 'error|blocks of' $R/bound-$b.err | head -2)"; done
timeout 110 $B selftest --backend cuda > $R/selftest.log 2>&1; echo "selftest rc $?"; tail -1 $R/selftest.log | cut -c1-200
(cd $OUT && tar czf r.tgz r)
