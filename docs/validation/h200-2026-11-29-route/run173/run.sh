#!/bin/bash
R=$OUT/r; mkdir -p $R; export XDG_CACHE_HOME=/tmp/gc
S=.gpucheck/s8; B=$S/f/gpuio
timeout 200 $B selftest --backend cuda > $R/selftest.out 2> $R/selftest.err; echo "selftest rc $?"; grep -E "passed|failed|ring group" $R/selftest.out $R/selftest.err | tail -6
bulk() { # env tag
  env $1 timeout 150 $B bench --backend cuda/forward --only bulk --repeats 1 --json > $R/bulk-$2.json 2> $R/bulk-$2.err; echo "== bulk $2 ($1) rc $?"
  python3 $S/ext.py $R/bulk-$2.err
}
for round in 1 2; do bulk X=1 route-$round; bulk GPUIO_FORWARD_ROUTE_WRITES=0 none-$round; done
grep -m2 "transport:\|groups of" $R/bulk-route-1.err
(cd $OUT && tar czf r.tgz r)
