#!/bin/bash
# Session 2026-11-26 evening, call 8: a profile of gpuio's host threads during a bulk
# read (perf, if the machine has it), and bulksteps with 4 rings / 256 slots against
# 8 rings / 512 slots, alternating (binary S = 95674b3).
S=./.gpucheck/m
mkdir -p /tmp/gc && cp -r .gpucheck/gc/gcache /tmp/gc/ 2>/dev/null
rm -f /tmp/gc/gcache/calibration.json
export XDG_CACHE_HOME=/tmp/gc/gcache
R=$OUT/r; mkdir -p $R
pack() { (cd $OUT && tar czf r.tgz r); }
head -c 9G /dev/zero > /tmp/big.bin
echo "perf: $(which perf 2>&1)" >> $R/summary.txt
i=0
b() { # name slots rings per [wrapper...]
  i=$((i+1)); t0=$(date +%s); local name=$1 slots=$2 rings=$3 per=$4; shift 4
  GPUIO_FORWARD_RINGS=$rings timeout 100 "$@" $S/gpuio-S run --backend cuda/forward --grid 132 --block 1024 --slots $slots --slot-size 1048576 \
    --file data=/tmp/big.bin:r --params 12 --arg 0 --arg 1048576 --arg $per .gpucheck/k/bulksteps.cu > $R/b$i-$name.log 2>&1
  echo "== b$i $name (slots $slots, rings $rings, per $per) rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
  grep -E "finished in|params:" $R/b$i-$name.log >> $R/summary.txt
  pack
}
b warm 256 4 1
b r4 256 4 2
b r8 512 8 2
b r4 256 4 2
b r8 512 8 2
b r16 1024 16 2
if which perf > /dev/null 2>&1; then
  b perf-r4 256 4 2 perf record -e cpu-clock -F 2000 -g -o /tmp/perf.data --
  perf report -i /tmp/perf.data --stdio --no-children --sort comm,dso,sym 2>/dev/null | grep -v '^$' | head -150 > $R/perf-report.txt
  perf report -i /tmp/perf.data --stdio --no-children --sort comm 2>/dev/null | grep -v '^#' | grep -v '^$' | head -30 > $R/perf-comm.txt
fi
rm -f /tmp/big.bin
pack
cat $R/summary.txt
