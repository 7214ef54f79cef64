#!/bin/bash
# Call 2 of 2026-11-27 (second stop): (1) N threads pwrite-ing one fresh file vs N files (no GPU);
# (2) forward bench --only requests with GPUIO_FORWARD_FILE_WRITES 0 (no turns) / 2 / 1 interleaved,
# every thread's CPU sampled on one; (3) selftest cuda of the build (direct reaper batch: cold NVRTC);
# (4) direct bench against the fresh-file references if time is left.
S=./.gpucheck/m49
T0=$(date +%s)
mkdir -p /tmp/gc/gcache; cp -r .gpucheck/gc/gcache/. /tmp/gc/gcache/ 2>/dev/null
export XDG_CACHE_HOME=/tmp/gc/gcache
R=$OUT/r; mkdir -p $R
pack() { (cd $OUT && tar czf r.tgz r); tar czf $OUT/gcache.tgz -C /tmp/gc gcache; }
timeout 60 ./.gpucheck/k/contend /tmp > $R/contend.txt 2>&1; echo "== contend rc=$?" >> $R/summary.txt; cat $R/contend.txt >> $R/summary.txt
samp() { while kill -0 $1 2>/dev/null; do t=$(date +%s.%N)
    for d in /proc/$1/task/*; do [ -r $d/stat ] || continue
      echo "$t ${d##*/} $(tr ' ' _ < $d/comm 2>/dev/null) $(cut -d')' -f2- $d/stat 2>/dev/null | awk '{print $12, $13, $37}')"
    done; sleep 0.25; done >> $2; }
stamp() { while IFS= read -r l; do echo "$(date +%s.%N) $l"; done; }
bench() { # name file_writes transport [sample]
  t0=$(date +%s)
  GPUIO_FORWARD_FILE_WRITES=$2 timeout $(( T0 + 560 - t0 )) $S/gpuio-ft bench --only requests --backend cuda/$3 --repeats 1 > $R/req-$1.log 2> >(stamp > $R/req-$1.err) &
  p=$!
  if [ -n "$4" ]; then sleep 0.3; bp=$(pgrep -P $p gpuio- || echo $p); samp $bp $R/samp-$1.txt; fi
  wait $p
  echo "== requests $1 (file_writes $2) rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
  grep -E "1 MiB|NOPs, whole|also vs" $R/req-$1.log >> $R/summary.txt; pack; }
bench fw0a 0 forward
bench fw2a 2 forward s
bench fw1a 1 forward
bench fw2b 2 forward
bench fw0b 0 forward
left=$(( T0 + 575 - $(date +%s) ))
[ $left -gt 60 ] && { timeout $left $S/gpuio-ft selftest --backend cuda > $R/selftest.log 2>&1
echo "== selftest rc=$? $(( $(date +%s)-T0 )) s" >> $R/summary.txt; tail -3 $R/selftest.log >> $R/summary.txt; }
pack
left=$(( T0 + 575 - $(date +%s) ))
[ $left -gt 55 ] && bench direct 2 direct
cat $R/summary.txt
