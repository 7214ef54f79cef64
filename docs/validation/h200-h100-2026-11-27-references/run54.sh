#!/bin/bash
# Call 7: which threads an idle open channel's CPU goes to on the GPU machine: bench --only queues
# (main 2d57eb6), every thread's schedstat run time sampled every 0.25 s.
S=./.gpucheck/m50
mkdir -p /tmp/gc/gcache; cp -r .gpucheck/gc/gcache/. /tmp/gc/gcache/ 2>/dev/null
export XDG_CACHE_HOME=/tmp/gc/gcache
R=$OUT/r; mkdir -p $R
samp() { while kill -0 $1 2>/dev/null; do t=$(date +%s.%N)
    for d in /proc/$1/task/*; do echo "$t ${d##*/} $(tr ' ' _ < $d/comm 2>/dev/null) $(cut -d' ' -f1,3 $d/schedstat 2>/dev/null)"; done
    sleep 0.25; done >> $2; }
stamp() { while IFS= read -r l; do echo "$(date +%s.%N) $l"; done; }
timeout 200 $S/gpuio-main bench --only queues --backend cuda > $R/queues.log 2> >(stamp > $R/queues.err) &
p=$!; sleep 0.3; bp=$(pgrep -P $p gpuio- || echo $p); samp $bp $R/samp.txt; wait $p
echo "rc=$?" >> $R/queues.log
(cd $OUT && tar czf r.tgz r)
grep -E "idle|to device, 64" $R/queues.log
