#!/bin/bash
R=$OUT/r; mkdir -p $R; export XDG_CACHE_HOME=/tmp/gc
S=.gpucheck/s6
go() { # bin transport slots tag
  timeout 60 $S/$1/gpuio run $S/p/nops.cu --backend cuda/$2 --grid 132 --block 1024 --slots $3 --arg 16 --arg 0 --arg 0xffffffffffffffff --arg 0 > $R/nops-$1-$2-s$3-$4.log 2>&1
}
for r in r1 r2 r3; do
  for b in fin pc5 pc2; do go $b forward 1024 $r; go $b forward 256 $r; go $b mailbox 1024 $r; go $b mailbox 256 $r; done
done
for b in fin pc5 pc2; do timeout 100 $S/$b/gpuio bench --only latency --repeats 3 > $R/lat-$b.log 2>&1; done
(cd $OUT && tar czf r.tgz r)
cd $R && for f in nops*.log; do python3 - "$f" <<'PY'
import sys,re
f=sys.argv[1]; t=open(f).read()
m=re.search(r'params: \[([^\]]*)\]',t); c=re.search(r'host CPU ([0-9.]+m?s)',t)
if m:
    p=[int(x) for x in m.group(1).split(',')]; d=p[3]-p[2]; print("%-36s %8.2f M/s fail %d  cpu %s"%(f,2162688/d*1e3,p[1], c.group(1) if c else '?'))
PY
done
for b in fin pc5 pc2; do grep -h "NOP latency p50" lat-$b.log | sed "s/^/$b /" | cut -c1-110; done
