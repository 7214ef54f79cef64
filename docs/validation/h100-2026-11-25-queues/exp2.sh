#!/bin/bash
# A/B: queue cells written whole (B) vs header fields written apart (A); sizes whose
# cells are 64-B aligned (48, 112, 240) vs not; ncu stall breakdown of B.
S=./.gpucheck/s
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv > $R/machine.txt 2>&1
q() { # bin name env...
  local bin=$1 name=$2; shift 2
  env GPUIO_BENCH_QUEUE_SIZES=48,64,112,128,240,256 "$@" timeout 150 $S/gpuio-$bin bench --only queues --repeats 1 > $R/q-$bin-$name.txt 2> $R/q-$bin-$name.err
  echo "== $bin $name $* rc=$?" >> $OUT/summary.txt
  grep -E "msg/s; kernel ended" $R/q-$bin-$name.err >> $OUT/summary.txt
  grep -E "round trip|to device|idle" $R/q-$bin-$name.txt >> $OUT/summary.txt
}
q A default
q B default
q A big GPUIO_BENCH_QUEUE_CAPACITY=131072
q B big GPUIO_BENCH_QUEUE_CAPACITY=131072
q B default2
for bin in A B; do
  timeout 120 $S/gpuio-$bin run $S/printf_flood.cu --grid 132 --block 1024 --arg 16 --params 4 --log-rings 32 > /tmp/flood.txt 2> $R/flood-$bin.err
  echo "== printf flood $bin rc=$? lines=$(wc -l < /tmp/flood.txt)" >> $OUT/summary.txt
  grep -E "M lines/s" $R/flood-$bin.err >> $OUT/summary.txt
  rm -f /tmp/flood.txt
done
echo "== ncu B" >> $OUT/summary.txt
GPUIO_BENCH_QUEUE_SIZES=64 GPUIO_BENCH_QUEUE_CAPACITY=131072 timeout 300 ncu --clock-control none --replay-mode application -k regex:queue_send --launch-skip 1 --launch-count 1 \
  --section WarpStateStats --section SourceCounters --section LaunchStats --section Occupancy --print-details all \
  --metrics regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio,gpu__time_duration.sum,smsp__inst_executed.sum,lts__t_requests_srcunit_tex_op_atom.sum,lts__t_sectors_srcunit_tex_aperture_sysmem_op_write.sum,lts__t_requests_srcunit_tex_aperture_sysmem_op_write.sum,pcie__write_bytes.sum \
  $S/gpuio-B bench --only queues --quick > $R/ncu-B.txt 2>&1
echo "rc=$?" >> $OUT/summary.txt
cd $OUT && tar czf r.tgz r && rm -rf r
