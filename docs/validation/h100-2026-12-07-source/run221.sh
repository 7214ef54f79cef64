#!/bin/bash
# run 221: ca5dc6a (cur) against the same with huge-page staging (thp, 48bccaf), bulk passes, interleaved; selftest of thp
set -u
export XDG_CACHE_HOME=/tmp/gc
R=$OUT/r; mkdir -p $R
T0=$(date +%s)
(nvidia-smi --query-gpu=name,driver_version --format=csv; cat /sys/kernel/mm/transparent_hugepage/enabled /sys/kernel/mm/transparent_hugepage/defrag; uname -r; nproc) > $R/gpu.txt 2>&1; cat $R/gpu.txt
for spec in forward:1 forward:2 direct:1; do
  b=${spec%:*}; rep=${spec#*:}
  for n in cur thp; do
    timeout 100 .gpucheck/s24/$n/gpuio bench --backend cuda/$b --only bulk --repeats 1 > $R/bulk-$b-$n-$rep.txt 2>&1 &
    P=$!; sleep 8; grep AnonHuge /proc/$(pgrep -n -x gpuio)/smaps_rollup > $R/huge-$b-$n-$rep.txt 2>&1; wait $P
    echo "$b $n $rep rc $? t=$(( $(date +%s) - T0 )) $(cat $R/huge-$b-$n-$rep.txt)"
    sed 's/\x1b\[[0-9;]*m//g' $R/bulk-$b-$n-$rep.txt | grep -E "^  [a-z]+: 1 MiB|host thread|io_uring" | grep -v "SM group" | cut -c1-150 | head -20
    (cd $OUT && tar czf r.tgz r)
  done
done
timeout 90 .gpucheck/s24/thp/gpuio selftest --backend cuda > $R/selftest-thp.txt 2>&1
echo "selftest thp rc $? t=$(( $(date +%s) - T0 ))"
sed 's/\x1b\[[0-9;]*m//g' $R/selftest-thp.txt | grep -E "^FAIL|passed" | tail -5
(cd $OUT && tar czf r.tgz r)
