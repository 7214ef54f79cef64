#!/bin/bash
R=$OUT/r; mkdir -p $R; export XDG_CACHE_HOME=/tmp/gc
S=.gpucheck/s6
go() { # transport slots rings tag
  GPUIO_FORWARD_RINGS=$3 GPUIO_MAILBOX_THREADS=$3 timeout 60 $S/fin/gpuio run $S/p/nops.cu --backend cuda/$1 --grid 132 --block 1024 --slots $2 --arg 16 --arg 0 --arg 0xffffffffffffffff --arg 0 > $R/nops-$1-s$2-f$3-$4.log 2>&1
}
bg_start() { # kind count
  PIDS=""
  for i in $(seq 1 $2); do
    case $1 in
      spin) bash -c 'while :; do :; done' & ;;
      yield) python3 -c 'import os
while True: os.sched_yield()' & ;;
      mem) python3 -c 'b=bytearray(1<<20)
while True:
  for i in range(0,1<<20,4096): b[i]=(b[i]+1)&255' & ;;
    esac
    PIDS="$PIDS $!"
  done
  sleep 0.5
}
bg_stop() { kill $PIDS 2>/dev/null; wait $PIDS 2>/dev/null; }
for r in r1 r2; do
  go forward 1024 4 base-$r; go forward 1024 16 base-$r; go forward 256 4 base-$r
  for k in spin yield mem; do bg_start $k 12; go forward 1024 4 $k-$r; go forward 256 4 $k-$r; bg_stop; done
done
(cd $OUT && tar czf r.tgz r)
cd $R && for f in nops*.log; do python3 - "$f" <<'PY'
import sys,re
f=sys.argv[1]; t=open(f).read()
m=re.search(r'params: \[([^\]]*)\]',t); c=re.search(r'host CPU ([0-9.]+m?s)',t)
if m:
    p=[int(x) for x in m.group(1).split(',')]; d=p[3]-p[2]; print("%-36s %8.2f M/s fail %d  cpu %s"%(f,2162688/d*1e3,p[1], c.group(1) if c else '?'))
PY
done
