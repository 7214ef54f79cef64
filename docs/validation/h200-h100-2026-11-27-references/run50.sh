#!/bin/bash
# Call 3 of 2026-11-27 (second stop), main 2d57eb6: (1) srcmem probe: pwrite/pread 1 MiB from/into
# malloc'd vs registered (gpuio staging) vs GPU-written vs MADV_HUGEPAGE memory; (2) selftest cuda;
# (3) bench --only requests on direct (sampled) and mailbox against the fresh-file references.
S=./.gpucheck/m50
T0=$(date +%s)
mkdir -p /tmp/gc/gcache; cp -r .gpucheck/gc/gcache/. /tmp/gc/gcache/ 2>/dev/null
export XDG_CACHE_HOME=/tmp/gc/gcache
R=$OUT/r; mkdir -p $R
pack() { (cd $OUT && tar czf r.tgz r); tar czf $OUT/gcache.tgz -C /tmp/gc gcache; }
{ cat /sys/kernel/mm/transparent_hugepage/enabled /sys/kernel/mm/transparent_hugepage/defrag; } > $R/thp.txt 2>&1
nvcc -O2 -o /tmp/srcmem .gpucheck/k/srcmem.cu -lcuda > $R/srcmem-build.txt 2>&1 && timeout 90 /tmp/srcmem /tmp > $R/srcmem.txt 2>&1
echo "== srcmem rc=$? $(( $(date +%s)-T0 )) s" >> $R/summary.txt; cat $R/thp.txt $R/srcmem.txt >> $R/summary.txt; pack
timeout 330 $S/gpuio-main selftest --backend cuda > $R/selftest.log 2>&1
echo "== selftest rc=$? $(( $(date +%s)-T0 )) s" >> $R/summary.txt; tail -3 $R/selftest.log >> $R/summary.txt; pack
samp() { while kill -0 $1 2>/dev/null; do t=$(date +%s.%N)
    for d in /proc/$1/task/*; do [ -r $d/stat ] || continue
      echo "$t ${d##*/} $(tr ' ' _ < $d/comm 2>/dev/null) $(cut -d')' -f2- $d/stat 2>/dev/null | awk '{print $12, $13, $37}')"
    done; sleep 0.25; done >> $2; }
stamp() { while IFS= read -r l; do echo "$(date +%s.%N) $l"; done; }
bench() { # name transport [sample]
  t0=$(date +%s); left=$(( T0 + 585 - t0 )); [ $left -lt 45 ] && return
  timeout $left $S/gpuio-main bench --only requests --backend cuda/$2 --repeats 1 > $R/req-$1.log 2> >(stamp > $R/req-$1.err) &
  p=$!
  if [ -n "$3" ]; then sleep 0.3; bp=$(pgrep -P $p gpuio- || echo $p); samp $bp $R/samp-$1.txt; fi
  wait $p
  echo "== requests $1 rc=$? $(( $(date +%s)-t0 )) s" >> $R/summary.txt
  grep -E "1 MiB p.*whole|NOPs, whole|also vs the same io_uring" $R/req-$1.log >> $R/summary.txt; pack; }
bench direct direct s
bench mailbox mailbox
cat $R/summary.txt
