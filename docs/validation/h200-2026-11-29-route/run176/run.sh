#!/bin/bash
R=$OUT/r; mkdir -p $R; export XDG_CACHE_HOME=/tmp/gc
S=.gpucheck/s8; B=$S/w/gpuio
bulk() { # env tag
  env $1 timeout 150 $B bench --backend cuda/forward --only bulk --repeats 1 --json > $R/bulk-$2.json 2> $R/bulk-$2.err; echo "== bulk $2 ($1) rc $?"
  grep -E "^  forward: 1 MiB pread" -A12 $R/bulk-$2.err | grep -E "forward: 1 MiB pread|host CPU" | sed -E 's/ +/ /g; s/vs one host thread.*\(([0-9.]+x).*/\1/; s/host CPU \(user \+ system\): //; s/ s per million ops.*(io-wq workers \([0-9]+ of them; [0-9.]+ cores)/ \1/' | cut -c1-150 | paste - - 
  python3 $S/ext.py $R/bulk-$2.err | grep -v "##"
}
for round in 1 2; do bulk X=1 cap-$round; bulk GPUIO_FORWARD_IO_WORKERS=0 nocap-$round; done
(cd $OUT && tar czf r.tgz r)
