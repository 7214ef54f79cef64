#!/bin/bash
# Call 1 of 2026-11-27 (second stop): (1) where the host's time goes during bulk: every thread's
# CPU time (the process's threads, iou-sqp, iou-wrk) sampled every 0.5 s during bench --only requests on
# direct and forward; (2) mailbox-lines / direct-reap-batch against main by gpuio run NOPs; (3) mbl selftest.
S=./.gpucheck/m
T0=$(date +%s)
mkdir -p /tmp/gc/gcache; cp -r .gpucheck/gc/gcache/. /tmp/gc/gcache/ 2>/dev/null
export XDG_CACHE_HOME=/tmp/gc/gcache
R=$OUT/r; mkdir -p $R
pack() { (cd $OUT && tar czf r.tgz r); tar czf $OUT/gcache.tgz -C /tmp/gc gcache; }
{ uname -a; df -T /tmp .; which perf bpftrace; cat /proc/sys/kernel/perf_event_paranoid; nproc; mount | grep -E " /tmp | / "; } > $R/env.txt 2>&1
samp() { # pid out
  while kill -0 $1 2>/dev/null; do t=$(date +%s.%N)
    for d in /proc/$1/task/*; do
      [ -r $d/stat ] || continue
      echo "$t ${d##*/} $(tr ' ' _ < $d/comm 2>/dev/null) $(cut -d')' -f2- $d/stat 2>/dev/null | awk '{print $12, $13, $37}')"
    done; sleep 0.5; done >> $2; }
stamp() { while IFS= read -r l; do echo "$(date +%s.%N) $l"; done; }
bench() { # name binary transport
  t0=$(date +%s)
  timeout $(( T0 + 580 - t0 )) $S/gpuio-$2 bench --only requests --backend cuda/$3 --repeats 1 > $R/req-$1.log 2> >(stamp > $R/req-$1.err) &
  p=$!; sleep 0.3; bp=$(pgrep -P $p gpuio- || echo $p); samp $bp $R/samp-$1.txt; wait $p
  echo "== requests $1 rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
  grep -E "1 MiB|NOPs, whole" $R/req-$1.log >> $R/summary.txt; pack; }
bench direct main direct
bench forward main forward
nops() { # name binary backend slots [per-thread]
  t0=$(date +%s)
  timeout 60 $S/gpuio-$2 run .gpucheck/k/nops.cu --backend $3 --grid 132 --block 1024 --slots $4 --arg ${5:-16} --arg 0 > $R/n-$1.log 2>&1
  echo "== nops $1 ($2 $3 slots $4) rc=$? $(( $(date +%s)-t0 )) s: $(grep -o 'finished in.*' $R/n-$1.log)" >> $R/summary.txt
}
for rep in 1 2; do for sl in 256 1024; do for b in main mbl; do nops $b-mb$sl-$rep $b cuda/mailbox $sl; done; done; done
for rep in 1 2; do for b in main drb; do nops $b-direct-$rep $b cuda/direct 256 4; done; done
pack
left=$(( T0 + 570 - $(date +%s) ))
[ $left -gt 60 ] && { timeout $left $S/gpuio-mbl selftest --backend cuda > $R/selftest-mbl.log 2>&1
echo "== selftest mbl rc=$? $(( $(date +%s)-T0 )) s" >> $R/summary.txt; tail -1 $R/selftest-mbl.log >> $R/summary.txt; }
pack
cat $R/summary.txt
