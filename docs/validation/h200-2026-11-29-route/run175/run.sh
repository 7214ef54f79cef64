#!/bin/bash
R=$OUT/r; mkdir -p $R; export XDG_CACHE_HOME=/tmp/gc
S=.gpucheck/s8; B=$S/g/gpuio
bulk() { # env tag
  env $1 timeout 150 $B bench --backend cuda/forward --only bulk --repeats 1 --json > $R/bulk-$2.json 2> $R/bulk-$2.err; echo "== bulk $2 ($1) rc $?"
  python3 $S/ext.py $R/bulk-$2.err
}
I=GPUIO_FORWARD_INLINE_WRITES=1048576
for round in 1 2; do
  bulk "GPUIO_X_ROUTE_GROUP=1 $I" g1inline-$round; bulk X=1 g4-$round; bulk "GPUIO_X_ROUTE_GROUP=4 $I" g4inline-$round
done
(cd $OUT && tar czf r.tgz r)
