#!/bin/bash
# Call 8: the log's first drain thread watches the others' rings, the others sleep up to 500 ms
# (build `watch`) against main 2d57eb6: --only queues each (idle channel, schedstat sampled),
# then --only requests on cuda/forward for printf with `watch`.
S=./.gpucheck/m55
T0=$(date +%s)
mkdir -p /tmp/gc/gcache; cp -r .gpucheck/gc/gcache/. /tmp/gc/gcache/ 2>/dev/null
export XDG_CACHE_HOME=/tmp/gc/gcache
R=$OUT/r; mkdir -p $R
samp() { while kill -0 $1 2>/dev/null; do t=$(date +%s.%N)
    for d in /proc/$1/task/*; do echo "$t ${d##*/} $(tr ' ' _ < $d/comm 2>/dev/null) $(cut -d' ' -f1,3 $d/schedstat 2>/dev/null)"; done 2>/dev/null
    sleep 0.25; done >> $2; }
stamp() { while IFS= read -r l; do echo "$(date +%s.%N) $l"; done; }
q() { # build
  timeout 150 $S/gpuio-$1 bench --only queues --backend cuda > $R/queues-$1.log 2> >(stamp > $R/queues-$1.err) &
  p=$!; sleep 0.3; bp=$(pgrep -P $p gpuio- || echo $p); samp $bp $R/samp-$1.txt; wait $p
  echo "== queues $1 rc=$? $(( $(date +%s)-T0 )) s" >> $R/summary.txt
  grep -E "idle|64 B messages" $R/queues-$1.log >> $R/summary.txt; (cd $OUT && tar czf r.tgz r); }
q watch
q main
left=$(( T0 + 560 - $(date +%s) ))
[ $left -gt 50 ] && { timeout $left $S/gpuio-watch bench --only requests --backend cuda/forward > $R/req-watch.log 2>&1
echo "== requests watch rc=$?" >> $R/summary.txt; grep -E "printf|1 MiB p.*one file  " $R/req-watch.log >> $R/summary.txt; }
(cd $OUT && tar czf r.tgz r)
cat $R/summary.txt
