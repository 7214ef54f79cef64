#!/bin/bash
R=$OUT/r; mkdir -p $R; export XDG_CACHE_HOME=/tmp/gc
S=.gpucheck/s6
go() { # bin kernel transport slots rings tag [taskset cpus]
  local pre=""; [ -n "$7" ] && pre="taskset -c $7"
  GPUIO_FORWARD_RINGS=$5 GPUIO_MAILBOX_THREADS=$5 timeout 60 $pre $S/$1/gpuio run $S/p/$2.cu --backend cuda/$3 --grid 132 --block 1024 --slots $4 --arg 16 --arg 0 --arg 0xffffffffffffffff --arg 0 --params 16 > $R/$2-$1-$3-s$4-f$5-$6.log 2>&1
}
for r in r1 r2; do
  go new nops forward 1024 16 $r; go calm nops forward 1024 16 calm-$r; go new nops forward 1024 16 ts8-$r 0-7; go new nops forward 1024 16 ts4-$r 0-3
  go new nops forward 1024 4 $r; go calm nops forward 1024 4 calm-$r; go calm nops forward 256 16 calm-$r; go new nops forward 256 16 $r
  go calm nops mailbox 1024 16 calm-$r; go new nops mailbox 1024 16 $r
done
(cd $OUT && tar czf r.tgz r)
cd $R && for f in *.log; do python3 - "$f" <<'PY'
import sys,re
f=sys.argv[1]; t=open(f).read()
m=re.search(r'params: \[([^\]]*)\]',t); c=re.search(r'host CPU ([0-9.]+m?s)',t)
if m:
    p=[int(x) for x in m.group(1).split(',')]; d=p[3]-p[2]; print("%-44s %8.2f M/s fail %d  cpu %s"%(f,2162688/d*1e3,p[1], c.group(1) if c else '?'))
PY
done
