#!/bin/bash
# Why: (a) the queue to the host stops at 75 M msg/s (8 rings; the probe moved 327 M)
# — per-SASS stall profile of gpuio_k_queue_send, and the same figure with 32 rings;
# (b) a NOP takes 11 us on mailbox (floor 3.2) — stall profile of the one-thread
# latency kernel (its first launch: NOPs).
S=./.gpucheck/m
R=$OUT/r; mkdir -p $R
prof() { # name kernel-regex skip args...
  local name=$1 k=$2 skip=$3; shift 3
  t0=$(date +%s)
  timeout 230 ncu --clock-control none --replay-mode application -k regex:$k --launch-skip $skip --launch-count 1 \
    --section SourceCounters --section WarpStateStats --section SpeedOfLight \
    --metrics gpu__time_duration.sum,smsp__inst_executed.sum,lts__t_requests_srcunit_tex_op_atom.sum,smsp__warps_active.avg.per_cycle_active \
    -o $R/$name $S/gpuio-main "$@" > $R/$name.log 2>&1
  echo "== ncu $name rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
  ncu --import $R/$name.ncu-rep --print-details all > $R/$name-details.txt 2>&1
  ncu --import $R/$name.ncu-rep --page source --print-source sass --csv > $R/$name-sass.csv 2>&1
  grep -E "Duration|atom|Warp Cycles Per Issued|warps_active" $R/$name-details.txt | head -12 >> $R/summary.txt
  rm -f $R/$name.ncu-rep
}
GPUIO_BENCH_QUEUE_SIZES=64 prof send queue_send 1 bench --only queues --quick
grep -E "msg/s;" $R/send.log >> $R/summary.txt
prof nop_mailbox gpuio_k_latency 0 bench --only requests --backend cuda/mailbox --quick
grep -E "NOP latency" $R/nop_mailbox.log >> $R/summary.txt
for rings in 8 32; do
  t0=$(date +%s)
  GPUIO_BENCH_QUEUE_SIZES=64 GPUIO_BENCH_QUEUE_RINGS=$rings GPUIO_BENCH_QUEUE_DRAINS=8 timeout 100 $S/gpuio-main bench --only queues --repeats 1 > $R/rings-$rings.txt 2> $R/rings-$rings.err
  echo "== rings $rings rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
  grep -E "msg/s;" $R/rings-$rings.err >> $R/summary.txt
done
cd $OUT && tar czf r.tgz r && cat r/summary.txt
