#!/bin/bash
R=$OUT/r; mkdir -p $R; export XDG_CACHE_HOME=/tmp/gc
S=.gpucheck/s8; B=$S/r/gpuio
N=GPUIO_X_NOROUTE=1
bulk() { # env tag
  env $1 timeout 150 $B bench --backend cuda/forward --only bulk --repeats 1 --json > $R/bulk-$2.json 2> $R/bulk-$2.err; echo "== bulk $2 ($1) rc $?"
  grep -E "^  forward:.*pwrite|host CPU" $R/bulk-$2.err | grep -B1 -A0 "host CPU" | grep -E "pwrite|CPU" | cut -c1-230 | head -12
}
writes() { # slots env tag
  rm -f /tmp/w.bin; sync
  env $2 timeout 90 $B run $S/p/writes.cu --backend cuda/forward --grid 132 --block 128 --slots $1 --slot-size 1048576 --file dst=/tmp/w.bin:w --arg 2147483648 --arg 0 --arg 0 --arg 0xffffffffffffffff --arg 0 > $R/writes-$3.log 2>&1
  python3 - "$R/writes-$3.log" "$3" <<'PY'
import sys,re
t=open(sys.argv[1]).read(); m=re.search(r'params: \[([^\]]*)\]',t); c=re.search(r'host CPU ([0-9.]+m?s)',t)
if m:
    p=[int(x) for x in m.group(1).split(',')]; print("writes %-16s %6.2f GB/s fail %d cpu %s"%(sys.argv[2],p[1]/(p[4]-p[3]),p[2],c.group(1) if c else '?'))
else: print(sys.argv[2], "no params"); print(t[-800:])
PY
}
nops() { # env tag
  env $1 timeout 90 $B run $S/p/nops.cu --backend cuda/forward --grid 132 --block 1024 --slots 1024 --slot-size 1048576 --arg 16 --arg 0 --arg 0xffffffffffffffff --arg 0 > $R/nops-$2.log 2>&1
  python3 - "$R/nops-$2.log" "$2" <<'PY'
import sys,re
t=open(sys.argv[1]).read(); m=re.search(r'params: \[([^\]]*)\]',t); c=re.search(r'host CPU ([0-9.]+m?s)',t)
if m:
    p=[int(x) for x in m.group(1).split(',')]; print("nops %-14s %6.2f M/s fail %d cpu %s"%(sys.argv[2],2162688/(p[3]-p[2])*1e3,p[1],c.group(1) if c else '?'))
else: print(sys.argv[2], "no params"); print(t[-800:])
PY
}
for round in 1 2; do
  writes 1024 X=1 route-$round; writes 1024 $N noroute-$round
done
nops X=1 route; nops $N noroute
bulk X=1 route1; bulk $N noroute1; bulk X=1 route2; bulk $N noroute2
(cd $OUT && tar czf r.tgz r)
