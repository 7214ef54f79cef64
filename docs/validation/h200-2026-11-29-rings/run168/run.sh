#!/bin/bash
R=$OUT/r; mkdir -p $R; export XDG_CACHE_HOME=/tmp/gc
S=.gpucheck/s7
nops() { # transport env tag
  env $2 timeout 60 $S/np/gpuio run $S/p/nops.cu --backend cuda/$1 --grid 132 --block 1024 --slots 1024 --arg 16 --arg 0 --arg 0xffffffffffffffff --arg 0 > $R/nops-$1-$3.log 2>&1
  python3 - "$R/nops-$1-$3.log" "$1 $3" <<'PY'
import sys,re
t=open(sys.argv[1]).read(); m=re.search(r'params: \[([^\]]*)\]',t); c=re.search(r'host CPU ([0-9.]+m?s)',t)
if m:
    p=[int(x) for x in m.group(1).split(',')]; print("%-28s %6.2f M/s fail %d cpu %s"%(sys.argv[2],2162688/(p[3]-p[2])*1e3,p[1],c.group(1) if c else '?'))
else: print(sys.argv[2], "no params"); print(t[-600:])
PY
}
for r in 1 2 3; do
  nops forward GPUIO_FORWARD_RINGS=16 pause16-$r; nops forward "GPUIO_FORWARD_RINGS=16 GPUIO_X_NOPAUSE=1" nopause16-$r
done
nops forward X=1 pause4-1; nops forward GPUIO_X_NOPAUSE=1 nopause4-1
nops mailbox GPUIO_MAILBOX_THREADS=16 mpause16-1; nops mailbox "GPUIO_MAILBOX_THREADS=16 GPUIO_X_NOPAUSE=1" mnopause16-1
