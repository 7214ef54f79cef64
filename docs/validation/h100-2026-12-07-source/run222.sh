#!/bin/bash
# run 222: where one file's write source sits (writeprobe.cu); machine topology; more THP pairs on direct
set -u
export XDG_CACHE_HOME=/tmp/gc
R=$OUT/r; mkdir -p $R
T0=$(date +%s)
( nvidia-smi --query-gpu=name,driver_version --format=csv; uname -r; lscpu; cat /sys/devices/system/cpu/cpu0/topology/thread_siblings_list; df -T /tmp .; grep -m1 "model name" /proc/cpuinfo; cat /sys/kernel/mm/transparent_hugepage/enabled ) > $R/machine.txt 2>&1
grep -E "Model name|Thread|Core|Socket|L3|NUMA node|Flags" $R/machine.txt | cut -c1-150 | grep -v Flags; tail -12 $R/machine.txt | head -7
nvcc -O3 -std=c++17 -arch=sm_90a -o /tmp/writeprobe .gpucheck/s25/writeprobe.cu > $R/nvcc.txt 2>&1 || { cat $R/nvcc.txt; }
timeout 120 /tmp/writeprobe /tmp/writeprobe.bin > $R/writeprobe-tmp.txt 2>&1; echo "probe /tmp rc $? t=$(( $(date +%s) - T0 ))"; tail -7 $R/writeprobe-tmp.txt
timeout 120 /tmp/writeprobe ./writeprobe.bin > $R/writeprobe-cwd.txt 2>&1; echo "probe cwd rc $? t=$(( $(date +%s) - T0 ))"; tail -7 $R/writeprobe-cwd.txt
(cd $OUT && tar czf r.tgz r)
for rep in 2 3; do
  for n in cur thp; do
    timeout 100 .gpucheck/s25/$n/gpuio bench --backend cuda/direct --only bulk --repeats 1 > $R/bulk-direct-$n-$rep.txt 2>&1 &
    P=$!; for s in 1 2 3 4 5 6 7 8 9 10 11; do sleep 3; grep AnonHuge /proc/$(pgrep -n -x gpuio)/smaps_rollup 2>/dev/null | tr -s ' ' | tr '\n' ' '; done > $R/huge-direct-$n-$rep.txt; wait $P
    echo "direct $n $rep rc $? t=$(( $(date +%s) - T0 )) $(cat $R/huge-direct-$n-$rep.txt)"
    sed 's/\x1b\[[0-9;]*m//g' $R/bulk-direct-$n-$rep.txt | grep -E "^  direct: 1 MiB|host CPU" | grep -v "SM group" | cut -c1-140 | head -8
    (cd $OUT && tar czf r.tgz r)
  done
done
