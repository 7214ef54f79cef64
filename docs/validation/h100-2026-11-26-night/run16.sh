#!/bin/bash
# Session 2026-11-26 (night), call 1: the new group fill on real warps (selftest),
# and the queue to the host before/after (8c99b80 before, d6548c9 fill, HEAD fill+drain).
S=./.gpucheck/m
mkdir -p /tmp/gc && cp -r .gpucheck/gc/gcache /tmp/gc/ 2>/dev/null
rm -f /tmp/gc/gcache/calibration.json
export XDG_CACHE_HOME=/tmp/gc/gcache
R=$OUT/r; mkdir -p $R
pack() { (cd $OUT && tar czf r.tgz r); (cd /tmp/gc && tar czf $OUT/gcache.tgz gcache); }
nvidia-smi --query-gpu=name,driver_version,pcie.link.gen.current,pcie.link.width.current --format=csv > $R/machine.txt 2>&1; uname -r >> $R/machine.txt; nproc >> $R/machine.txt
t0=$(date +%s)
timeout 200 $S/gpuio-head selftest --backend cuda > $R/selftest.log 2>&1
echo "== selftest head rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
tail -5 $R/selftest.log >> $R/summary.txt
pack
q() { # name, binary, env...
  local n=$1; local b=$2; shift 2; local t0=$(date +%s)
  env GPUIO_BENCH_QUEUE_SIZES=64 "$@" timeout 150 $S/gpuio-$b bench --only queues --backend cuda --repeats 1 > $R/q-$n.log 2>&1
  echo "== q $n ($b $*) rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
  grep -E "M msg/s;|copy-back: kernel|queue to host, 64 B messages|busy" $R/q-$n.log >> $R/summary.txt
}
q head head
q before before
q fill fill
q head2 head
q c1024 head GPUIO_BENCH_QUEUE_CAPACITY=1024
q c2048 head GPUIO_BENCH_QUEUE_CAPACITY=2048
q before2 before
q head3 head
pack
cat $R/summary.txt
