#!/bin/bash
# Session 2026-11-26 evening, call 1: 1 MiB reads against host threads
# (forward rings, mailbox server threads, bulk slots 256/512/1024).
S=./.gpucheck/m
mkdir -p /tmp/gc && cp -r .gpucheck/gc/gcache /tmp/gc/ 2>/dev/null
export XDG_CACHE_HOME=/tmp/gc/gcache
R=$OUT/r; mkdir -p $R
pack() { (cd $OUT && tar czf r.tgz r); }
nvidia-smi --query-gpu=name,driver_version,pcie.link.gen.current,pcie.link.width.current --format=csv > $R/gpu.txt 2>&1
uname -r >> $R/gpu.txt; nproc >> $R/gpu.txt
i=0
step() { # name env binary pair
  i=$((i+1)); local name=$1 envs=$2 bin=$3 pair=$4
  t0=$(date +%s)
  env $envs /usr/bin/time -v timeout 120 $S/$bin bench --only requests --backend $pair --repeats 1 > $R/$i-$name.log 2>&1
  echo "== $i $name ($envs $bin $pair) rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
  grep -E "1 MiB|Percent of CPU|Elapsed|User time|System time" $R/$i-$name.log >> $R/summary.txt
  pack
}
step fwd-main "X=1" gpuio-main cuda/forward
step fwd-s512-r8 "GPUIO_FORWARD_RINGS=8" gpuio-s512 cuda/forward
step fwd-s1024-r16 "GPUIO_FORWARD_RINGS=16" gpuio-s1024 cuda/forward
step fwd-s512-r4 "X=1" gpuio-s512 cuda/forward
step mb-main "X=1" gpuio-main cuda/mailbox
step mb-t8 "GPUIO_MAILBOX_THREADS=8" gpuio-main cuda/mailbox
step mb-t16 "GPUIO_MAILBOX_THREADS=16" gpuio-main cuda/mailbox
step mb-s512-t16 "GPUIO_MAILBOX_THREADS=16" gpuio-s512 cuda/mailbox
step fwd-main2 "X=1" gpuio-main cuda/forward
cat $R/summary.txt
