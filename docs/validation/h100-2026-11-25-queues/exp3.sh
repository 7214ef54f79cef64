#!/bin/bash
S=./.gpucheck/s
R=$OUT/r; mkdir -p $R
for mb in 1024 256; do
  echo "== nvcc ptxas GPUIO_MAX_BLOCK=$mb" >> $OUT/summary.txt
  timeout 300 nvcc -std=c++17 -arch=sm_90 -DGPUIO_MAX_BLOCK=$mb -Xptxas -v -I device/include -I device/kernels -c $S/spill.cu -o /tmp/spill$mb.o > $R/ptxas-$mb.txt 2>&1
  echo "rc=$?" >> $OUT/summary.txt
  grep -A2 -E "Compiling entry function '(gpuio_k_queue_send|gpuio_k_printf_lines|gpuio_k_queue_recv|gpuio_k_whole_device[a-z_]*)'" $R/ptxas-$mb.txt | grep -vE "^--$" >> $OUT/summary.txt
done
for v in "printf_flood.cu 132 1024" "printf_flood256.cu 528 256" "printf_flood.cu 132 1024" "printf_flood256.cu 528 256"; do
  set -- $v
  timeout 120 $S/gpuio-C run $S/$1 --grid $2 --block $3 --arg 16 --params 4 --log-rings 32 > /tmp/flood.txt 2> $R/flood.err
  echo "== printf flood $1 $2x$3 rc=$? lines=$(wc -l < /tmp/flood.txt)" >> $OUT/summary.txt
  grep -E "M lines/s|kernel" $R/flood.err | head -3 >> $OUT/summary.txt
  rm -f /tmp/flood.txt
done
cd $OUT && tar czf r.tgz r && rm -rf r
