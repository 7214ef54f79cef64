#!/bin/bash
R=$OUT/r; mkdir -p $R; export XDG_CACHE_HOME=/tmp/gc
S=.gpucheck/s6
go() { # build slots grid block n tag
  timeout 90 $S/$1/gpuio run $S/p/nops.cu --backend cuda/direct --grid $3 --block $4 --slots $2 --arg $5 --arg 0 --arg 0xffffffffffffffff --arg 0 > $R/nops-$1-s$2-$3x$4-$6.log 2>&1
  echo "== $1 slots $2 $3x$4x$5 $6: $(grep -E 'finished' $R/nops-$1-s$2-$3x$4-$6.log | tail -1)"; grep -E "params|rror" $R/nops-$1-s$2-$3x$4-$6.log | head -2
}
for round in r1 r2; do for b in st new; do go $b 256 132 1024 16 $round; go $b 1024 132 1024 16 $round; done; done
for b in st new; do go $b 256 1 1 5000 r1; done
timeout 150 $S/new/gpuio selftest --backend cuda > $R/selftest-new.log 2>&1; echo "== selftest new rc $?: $(tail -1 $R/selftest-new.log)"
for b in st new; do
timeout 200 $S/$b/gpuio bench --only requests --repeats 1 > $R/req-$b.log 2>&1; echo "== req $b rc $?"; grep -E "NOPs, whole|SQPOLL ring of|NOP latency p50" $R/req-$b.log | head -20
done
(cd $OUT && tar czf r.tgz r)
