#!/bin/bash
# Queue and printf-log limits: ring-count / capacity / drain-thread sweeps and an ncu look.
B=./.gpucheck/s/gpuio
S=./.gpucheck/s
export GPUIO_BENCH_QUEUE_SIZES=64
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv > $OUT/machine.txt 2>&1
uname -r >> $OUT/machine.txt; nproc >> $OUT/machine.txt
run() { # name, env...
  local name=$1; shift
  echo "== $name $*" >> $OUT/summary.txt
  env "$@" timeout 150 $B bench --only queues --repeats 1 > $OUT/q-$name.txt 2> $OUT/q-$name.err
  echo "rc=$?" >> $OUT/summary.txt
  grep -E "msg/s; kernel ended|queue to host, 64 B messages|round trip" $OUT/q-$name.err $OUT/q-$name.txt >> $OUT/summary.txt
}
run default
run r32 GPUIO_BENCH_QUEUE_RINGS=32 GPUIO_BENCH_QUEUE_DRAINS=8
run r128 GPUIO_BENCH_QUEUE_RINGS=128 GPUIO_BENCH_QUEUE_DRAINS=8
run r8big GPUIO_BENCH_QUEUE_CAPACITY=1048576
run r128big GPUIO_BENCH_QUEUE_RINGS=128 GPUIO_BENCH_QUEUE_CAPACITY=65536 GPUIO_BENCH_QUEUE_DRAINS=8
run r8d1 GPUIO_BENCH_QUEUE_DRAINS=1
run r8d16big GPUIO_BENCH_QUEUE_RINGS=16 GPUIO_BENCH_QUEUE_CAPACITY=524288 GPUIO_BENCH_QUEUE_DRAINS=16
for cfg in "8 4" "32 4" "32 8" "128 8"; do
  set -- $cfg
  echo "== printf flood log-rings $1 log-threads $2" >> $OUT/summary.txt
  timeout 120 $B run $S/printf_flood.cu --grid 132 --block 1024 --arg 16 --params 4 --log-rings $1 --log-threads $2 > /tmp/flood.txt 2> $OUT/flood-$1-$2.err
  echo "rc=$? lines=$(wc -l < /tmp/flood.txt)" >> $OUT/summary.txt
  grep -iE "lines|MB/s|wall|kernel" $OUT/flood-$1-$2.err | head -8 >> $OUT/summary.txt
  rm -f /tmp/flood.txt
done
echo "== ncu queue_send" >> $OUT/summary.txt
GPUIO_BENCH_QUEUE_SIZES=64 timeout 240 ncu --clock-control none --replay-mode application -k regex:queue_send --launch-skip 1 --launch-count 1 \
  --section SpeedOfLight --section WarpStateStats --section SchedulerStats \
  --metrics gpu__time_duration.sum,smsp__inst_executed.sum,lts__t_sectors_srcunit_tex_aperture_sysmem_op_write.sum,lts__t_requests_srcunit_tex_aperture_sysmem_op_write.sum,lts__t_sectors_srcunit_tex_aperture_sysmem_op_read.sum,lts__t_sectors_srcunit_tex_op_atom.sum,lts__t_requests_srcunit_tex_op_atom.sum,pcie__write_bytes.sum,pcie__read_bytes.sum \
  $B bench --only queues --quick > $OUT/ncu-queue.txt 2>&1
echo "rc=$?" >> $OUT/summary.txt
tail -80 $OUT/ncu-queue.txt >> $OUT/summary.txt
