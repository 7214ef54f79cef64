#!/bin/bash
# Session 2026-11-26 pm, call 5: where the whole-device NOPs' time goes on forward:
# ncu (application replay) of run4-nops.cu, 132 x 1024 threads x 4 NOPs, binary F.
S=./.gpucheck/m
mkdir -p /tmp/gc && cp -r .gpucheck/gc/gcache /tmp/gc/ 2>/dev/null
export XDG_CACHE_HOME=/tmp/gc/gcache
R=$OUT/r; mkdir -p $R
pack() { (cd $OUT && tar czf r.tgz r); }
t0=$(date +%s)
timeout 400 ncu --clock-control none --replay-mode application -k regex:nops --launch-count 1 \
  --section SourceCounters --section WarpStateStats --section SpeedOfLight \
  --metrics gpu__time_duration.sum,smsp__inst_executed.sum,pcie__read_bytes.sum,pcie__write_bytes.sum,lts__t_sectors_srcunit_tex_aperture_sysmem_op_read.sum,lts__t_requests_srcunit_tex_op_atom.sum,smsp__warps_active.avg.per_cycle_active \
  -o $R/nops $S/gpuio-F run --backend cuda/forward --grid 132 --block 1024 --arg 4 --arg 0 .gpucheck/k/nops.cu > $R/nops.log 2>&1
echo "== ncu rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
ncu --import $R/nops.ncu-rep --print-details all > $R/nops-details.txt 2>&1
ncu --import $R/nops.ncu-rep --page source --print-source sass --csv > $R/nops-sass.csv 2>&1
rm -f $R/nops.ncu-rep
grep -E "finished in" $R/nops.log >> $R/summary.txt
grep -E "Duration|pcie__|sysmem|atom|Warp Cycles Per Issued|Stall|warps_active" $R/nops-details.txt | head -30 >> $R/summary.txt
pack
cat $R/summary.txt
