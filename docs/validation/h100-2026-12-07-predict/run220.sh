#!/bin/bash
# run 220: ca5dc6a (cur) against the same with huge-page staging (thp), forward's bulk passes, interleaved; selftest of thp
set -u
export XDG_CACHE_HOME=/tmp/gc
R=$OUT/r; mkdir -p $R
T0=$(date +%s)
(nvidia-smi --query-gpu=name,driver_version --format=csv; cat /sys/kernel/mm/transparent_hugepage/enabled /sys/kernel/mm/transparent_hugepage/defrag) > $R/gpu.txt 2>&1; cat $R/gpu.txt
for rep in 1; do
  for v in s22/cur s23/thp; do
    n=$(basename $v)
    timeout 100 .gpucheck/$v/gpuio bench --backend cuda/forward --only bulk --repeats 1 > $R/bulk-$n-$rep.txt 2>&1 &
    P=$!; sleep 8; grep AnonHuge /proc/$(pgrep -n -x gpuio)/smaps_rollup > $R/huge-$n-$rep.txt 2>&1; wait $P
    echo "$n $rep rc $? t=$(( $(date +%s) - T0 )) $(cat $R/huge-$n-$rep.txt)"
    sed 's/\x1b\[[0-9;]*m//g' $R/bulk-$n-$rep.txt | grep -E "^  forward: 1 MiB|host CPU" | grep -v "SM group" | cut -c1-120 | head -16
    (cd $OUT && tar czf r.tgz r)
  done
done
timeout 90 .gpucheck/s23/thp/gpuio selftest --backend cuda > $R/selftest-thp.txt 2>&1
echo "selftest thp rc $? t=$(( $(date +%s) - T0 ))"
sed 's/\x1b\[[0-9;]*m//g' $R/selftest-thp.txt | grep -E "^FAIL|passed" | tail -5
(cd $OUT && tar czf r.tgz r)
