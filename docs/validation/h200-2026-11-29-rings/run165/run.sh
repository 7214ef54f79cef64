#!/bin/bash
R=$OUT/r; mkdir -p $R; export XDG_CACHE_HOME=/tmp/gc
S=.gpucheck/s7
OLD="GPUIO_FORWARD_RINGS=16 GPUIO_FORWARD_WQ_SHARE=4 GPUIO_FORWARD_INLINE_READS=18446744073709551615"
b() { # only env tag
  env $2 timeout 200 $S/a/gpuio bench --backend cuda/forward --only $1 --repeats 1 --json > $R/$1-$3.json 2> $R/$1-$3.err; echo "== $1 $3 rc $?"
  grep -E "^  forward:|host CPU" $R/$1-$3.err | sed -E 's/vs (.*): ([0-9.]+ [GMk]?[A-Za-z/]+) \(([0-9.x]+).*/ref \2 \3/; s/host CPU \(user \+ system\): //; s/, [0-9.]+ s per million ops//'
}
nops() { # env tag
  env $1 timeout 90 $S/a/gpuio run $S/p/nops.cu --backend cuda/forward --grid 132 --block 1024 --slots 1024 --arg 16 --arg 0 --arg 0xffffffffffffffff --arg 0 > $R/nops-$2.log 2>&1
  python3 - "$R/nops-$2.log" "$2" <<'PY'
import sys,re
t=open(sys.argv[1]).read(); m=re.search(r'params: \[([^\]]*)\]',t); c=re.search(r'host CPU ([0-9.]+m?s)',t)
if m:
    p=[int(x) for x in m.group(1).split(',')]; print("nops 1024 slots %-8s %6.2f M/s fail %d cpu %s"%(sys.argv[2],2162688/(p[3]-p[2])*1e3,p[1],c.group(1) if c else '?'))
else: print(sys.argv[2], "no params"); print(t[-800:])
PY
}
nops X=1 new1; nops "$OLD" old1; nops X=1 new2; nops "$OLD" old2
b requests X=1 new1; b requests "$OLD" old1; b requests X=1 new2; b requests "$OLD" old2
b bulk X=1 new1; b bulk "$OLD" old1
(cd $OUT && tar czf r.tgz r)
