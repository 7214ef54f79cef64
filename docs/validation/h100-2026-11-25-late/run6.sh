#!/bin/bash
# What limits the queue to the device (64 B: 5 M msg/s, warps whole, host waiting for
# room): per-SASS stall profile of gpuio_k_queue_recv.
S=./.gpucheck/m
R=$OUT/r; mkdir -p $R
GPUIO_BENCH_QUEUE_SIZES=64 timeout 420 ncu --clock-control none --replay-mode application -k regex:queue_recv --launch-skip 0 --launch-count 1 \
  --section SourceCounters --section WarpStateStats --section SpeedOfLight \
  --metrics gpu__time_duration.sum,smsp__inst_executed.sum,pcie__read_bytes.sum,pcie__write_bytes.sum,lts__t_sectors_srcunit_tex_aperture_sysmem_op_read.sum,lts__t_requests_srcunit_tex_op_atom.sum,smsp__warps_active.avg.per_cycle_active \
  -o $R/recv $S/gpuio-f bench --only queues --quick > $R/recv.log 2>&1
echo "ncu rc=$?" >> $R/summary.txt
ncu --import $R/recv.ncu-rep --print-details all > $R/recv-details.txt 2>&1
ncu --import $R/recv.ncu-rep --page source --print-source sass --csv > $R/recv-sass.csv 2>&1
grep -E "msg/s;" $R/recv.log >> $R/summary.txt
grep -E "Duration|pcie__|sysmem|atom|Warp Cycles Per Issued|Stall|warps_active" $R/recv-details.txt | head -30 >> $R/summary.txt
cd $OUT && tar czf r.tgz r && cat r/summary.txt
