#!/bin/bash
R=$OUT/r; mkdir -p $R; export XDG_CACHE_HOME=/tmp/gc
S=.gpucheck/s6
go() { # bin kernel transport slots rings tag
  GPUIO_FORWARD_RINGS=$5 GPUIO_MAILBOX_THREADS=$5 timeout 60 $S/$1/gpuio run $S/p/$2.cu --backend cuda/$3 --grid 132 --block 1024 --slots $4 --arg 16 --arg 0 --arg 0xffffffffffffffff --arg 0 --params 16 > $R/$2-$1-$3-s$4-f$5-$6.log 2>&1
  echo "== $1 $2 $3 slots $4 rings $5 $6: $(grep -E 'finished' $R/$2-$1-$3-s$4-f$5-$6.log | tail -1)"
}
for round in r1 r2; do
  go new nops forward 1024 16 $round; go spin nops forward 1024 16 $round; go spin nops forward 1024 8 $round
  go new nops mailbox 1024 16 $round; go spin nops mailbox 1024 16 $round
  go spin nops forward 256 16 $round; go spin nops mailbox 256 4 $round
done
go st waits forward 1024 16 r1; go st waits forward 1024 4 r1; go st waits forward 256 16 r1
(cd $OUT && tar czf r.tgz r)
cd $R && for f in *.log; do python3 - "$f" <<'PY'
import sys,re
f=sys.argv[1]; t=open(f).read()
m=re.search(r'params: \[([^\]]*)\]',t)
if m:
    p=[int(x) for x in m.group(1).split(',')]; d=p[3]-p[2]; print("%-44s %8.2f M/s fail %d  %s"%(f,2162688/d*1e3,p[1], p[4:14] if f.startswith('waits') else ''))
PY
done
