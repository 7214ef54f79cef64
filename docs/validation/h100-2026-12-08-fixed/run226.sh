#!/bin/bash
# run 226 (redefined 2026-12-08): direct's one-file writes, three binaries built from
# 73a6288 (the bulk figures, and the CPU thread's gated registered reference, say the
# io-wq workers' busy cores, runs and run-queue wait per request): "fixed" = 73a6288;
# "depth2" = + depth2-writes.patch (two marked writes of a file in flight, in direct
# and in the CPU thread's reference);
# "unmarked" = + unmarked-writes.patch (writes never marked: a diagnostic only, since
# unmarked writes of several files share one io-wq worker, hashprobe.rs). Alternated;
# then depth2's selftest on cuda/direct.
set -u
export XDG_CACHE_HOME=/tmp/gc
R=$OUT/r; mkdir -p $R
T0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/machine.txt 2>&1
uname -r >> $R/machine.txt; nproc >> $R/machine.txt; df -T . | tail -1 >> $R/machine.txt
grep -H . /sys/kernel/mm/transparent_hugepage/enabled /sys/kernel/mm/transparent_hugepage/defrag >> $R/machine.txt 2>&1
for run in fixed-1 depth2-1 unmarked-1 fixed-2 depth2-2; do
  b=${run%-*}
  f=$R/bulk-direct-$run.txt
  timeout 75 .gpucheck/s28/$b/gpuio bench --backend cuda/direct --only bulk --repeats 1 > $f 2>&1
  echo "$run rc $? t=$(( $(date +%s) - T0 ))"
  sed 's/\x1b\[[0-9;]*m//g' $f | grep -E "^  direct: 1 MiB pwrite|^      host CPU|pwrite 1 MiB, one file  |writes in flight, at most" | cut -c1-260 | head -14
done
timeout 100 .gpucheck/s28/depth2/gpuio selftest --backend cuda/direct > $R/selftest-depth2.txt 2>&1
echo "selftest depth2 rc $? t=$(( $(date +%s) - T0 ))"; tail -3 $R/selftest-depth2.txt
(cd $OUT && tar czf r.tgz r)
