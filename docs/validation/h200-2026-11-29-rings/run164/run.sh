#!/bin/bash
R=$OUT/r; mkdir -p $R; export XDG_CACHE_HOME=/tmp/gc
S=.gpucheck/s7
OLD=GPUIO_FORWARD_INLINE_READS=18446744073709551615
bulk() { # env tag
  env $1 timeout 150 $S/a/gpuio bench --backend cuda/forward --only bulk --repeats 1 --json > $R/bulk-$2.json 2> $R/bulk-$2.err; echo "== bulk $2 ($1) rc $?"
  grep -E "^  forward:|host CPU" $R/bulk-$2.err | sed -E 's/vs (.*): ([0-9.]+ GB\/s) \(([0-9.x]+).*/ref \2 \3/; s/host CPU \(user \+ system\): //; s/, [0-9.]+ s per million ops//'
}
bulk X=1 A1; bulk $OLD B1; bulk "GPUIO_FORWARD_RINGS=4 GPUIO_FORWARD_WQ_SHARE=1" C1
bulk X=1 A2; bulk $OLD B2; bulk "GPUIO_FORWARD_RINGS=4" D1
(cd $OUT && tar czf r.tgz r)
