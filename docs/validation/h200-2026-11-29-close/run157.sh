#!/bin/bash
R=$OUT/r; mkdir -p $R; export XDG_CACHE_HOME=/tmp/gc
S=.gpucheck/s6
go() { # bin kernel transport slots rings tag
  GPUIO_FORWARD_RINGS=$5 timeout 60 $S/$1/gpuio run $S/p/$2.cu --backend cuda/$3 --grid 132 --block 1024 --slots $4 --arg 16 --arg 0 --arg 0xffffffffffffffff --arg 0 --params 16 > $R/$2-$1-$3-s$4-f$5-$6.log 2>&1
}
for r in r1 r2; do go st waits forward 1024 16 $r; go st waits forward 1024 4 $r; go st waits forward 256 16 $r; go st waits forward 1024 8 $r; done
(cd $OUT && tar czf r.tgz r)
cd $R && for f in *.log; do python3 - "$f" <<'PY'
import sys,re
f=sys.argv[1]; t=open(f).read()
m=re.search(r'params: \[([^\]]*)\]',t)
if m:
    p=[int(x) for x in m.group(1).split(',')]; d=p[3]-p[2]; n=2162688
    print("%-40s %7.2f M/s fail %d | per NOP: acquire %.1f us, answer %.2f us, lap asked %.1f us, nil looks %.1f, held looks %.1f held asked %.2f us, polls %.1f | worst thread acq %.1f ms ans %.2f ms"%(f,n/d*1e3,p[1],p[4]/n/1e3,p[5]/n/1e3,p[6]/n/1e3,p[7]/n,p[8]/n,p[9]/n/1e3,p[10]/n,p[12]/1e6,p[13]/1e6))
PY
done
