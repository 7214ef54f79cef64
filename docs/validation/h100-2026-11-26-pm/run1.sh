#!/bin/bash
# Session 2026-11-26 pm, call 1: M = main b3ed3ca (claim funnels), C = 38f9af0 (credits).
S=./.gpucheck/m
mkdir -p /tmp/gc && cp -r .gpucheck/gc/gcache /tmp/gc/ 2>/dev/null
export XDG_CACHE_HOME=/tmp/gc/gcache
R=$OUT/r; mkdir -p $R
pack() { (cd $OUT && tar czf r.tgz r); }
{ nvidia-smi --query-gpu=name,driver_version,pcie.link.gen.current,pcie.link.width.current --format=csv; uname -r; nproc; } > $R/machine.txt 2>&1
i=0
for bin in M C C M; do
  i=$((i+1)); t0=$(date +%s)
  timeout 200 $S/gpuio-$bin bench --only queues --repeats 1 > $R/q-$i-$bin.txt 2> $R/q-$i-$bin.err
  echo "== queues $bin rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
  grep -E "B: .*msg/s; the host" $R/q-$i-$bin.err >> $R/summary.txt
  pack
done
for pair in cuda/forward cuda/mailbox; do
  t0=$(date +%s); n=${pair#cuda/}
  timeout 150 $S/gpuio-C bench --only requests --backend $pair --repeats 1 > $R/req-C-$n.txt 2> $R/req-C-$n.err
  echo "== requests C $pair rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
  grep -E "NOP|64 B pread, whole|4096 B pread, whole" $R/req-C-$n.txt >> $R/summary.txt
  pack
done
t0=$(date +%s)
GPUIO_BENCH_QUEUE_SIZES=64 timeout 300 ncu --clock-control none --replay-mode application -k regex:queue_recv --launch-skip 0 --launch-count 1 \
  --section SourceCounters --section WarpStateStats --section SpeedOfLight \
  --metrics gpu__time_duration.sum,smsp__inst_executed.sum,pcie__read_bytes.sum,pcie__write_bytes.sum,lts__t_sectors_srcunit_tex_aperture_sysmem_op_read.sum,lts__t_requests_srcunit_tex_op_atom.sum,smsp__warps_active.avg.per_cycle_active \
  -o $R/recv $S/gpuio-C bench --only queues --quick > $R/recv.log 2>&1
echo "== ncu rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
ncu --import $R/recv.ncu-rep --print-details all > $R/recv-details.txt 2>&1
ncu --import $R/recv.ncu-rep --page source --print-source sass --csv > $R/recv-sass.csv 2>&1
grep -E "msg/s;" $R/recv.log >> $R/summary.txt
grep -E "Duration|pcie__|sysmem|atom|Warp Cycles Per Issued|Stall|warps_active" $R/recv-details.txt | head -30 >> $R/summary.txt
rm -f $R/recv.ncu-rep
pack
cat $R/summary.txt
