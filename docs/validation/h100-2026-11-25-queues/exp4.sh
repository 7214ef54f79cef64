#!/bin/bash
S=./.gpucheck/s
R=$OUT/r; mkdir -p $R
ncu --help > $R/ncu-help.txt 2>&1
grep -n -i -A4 "\-\-page\|print-source" $R/ncu-help.txt | head -40 >> $OUT/summary.txt
for mb in 1024 256; do
  echo "== nvcc ptxas GPUIO_MAX_BLOCK=$mb" >> $OUT/summary.txt
  timeout 300 nvcc -std=c++17 -arch=sm_90 -DGPUIO_MAX_BLOCK=$mb -Xptxas -v -I device/include -I device/kernels -c $S/spill.cu -o /tmp/spill$mb.o > $R/ptxas-$mb.txt 2>&1
  echo "rc=$?" >> $OUT/summary.txt
  grep -A2 -E "Compiling entry function '(gpuio_k_queue_send|gpuio_k_printf_lines|gpuio_k_queue_recv)'" $R/ptxas-$mb.txt | grep -vE "^--$" >> $OUT/summary.txt
done
cuobjdump -sass -fun gpuio_k_queue_send /tmp/spill1024.o > $R/queue_send.sass 2>&1
echo "sass lines $(wc -l < $R/queue_send.sass); LDL $(grep -c LDL $R/queue_send.sass) STL $(grep -c STL $R/queue_send.sass) MEMBAR $(grep -c MEMBAR $R/queue_send.sass) ATOM $(grep -cE 'ATOM|RED' $R/queue_send.sass) SHFL $(grep -c SHFL $R/queue_send.sass)" >> $OUT/summary.txt
GPUIO_BENCH_QUEUE_SIZES=64 GPUIO_BENCH_QUEUE_CAPACITY=131072 timeout 300 ncu --clock-control none --replay-mode application -k regex:queue_send --launch-skip 1 --launch-count 1 \
  --section SourceCounters --section WarpStateStats -o $R/qs -f $S/gpuio-C bench --only queues --quick > $R/ncu-run.txt 2>&1
echo "ncu rc=$?" >> $OUT/summary.txt
ncu --import $R/qs.ncu-rep --page source --print-source sass --csv > $R/qs-source.csv 2> $R/qs-source.err
echo "source rc=$? $(wc -l < $R/qs-source.csv) lines" >> $OUT/summary.txt
head -c 600 $R/qs-source.err >> $OUT/summary.txt
cd $OUT && tar czf r.tgz r && rm -rf r
