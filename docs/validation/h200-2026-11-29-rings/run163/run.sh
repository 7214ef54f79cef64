#!/bin/bash
R=$OUT/r; mkdir -p $R; export XDG_CACHE_HOME=/tmp/gc
S=.gpucheck/s7
dd if=/dev/urandom of=/tmp/rd.bin bs=1M count=2048 status=none; cat /tmp/rd.bin > /dev/null
OLD=GPUIO_FORWARD_INLINE_READS=18446744073709551615
ZERO=GPUIO_FORWARD_INLINE_READS=0
reads() { # transport slots env tag
  env $3 timeout 90 $S/a/gpuio run $S/p/reads.cu --backend cuda/$1 --grid 132 --block 128 --slots $2 --file src=/tmp/rd.bin:r --arg 2147483648 --arg 0 --arg 0 --arg 0xffffffffffffffff --arg 0 > $R/reads-$1-s$2-$4.log 2>&1
  python3 - "$R/reads-$1-s$2-$4.log" "$1 s$2 $4" <<'PY'
import sys,re
t=open(sys.argv[1]).read(); m=re.search(r'params: \[([^\]]*)\]',t); c=re.search(r'host CPU ([0-9.]+m?s)',t)
if m:
    p=[int(x) for x in m.group(1).split(',')]; print("%-28s %6.1f GB/s fail %d cpu %s"%(sys.argv[2],p[1]/(p[4]-p[3]),p[2],c.group(1) if c else '?'))
else: print(sys.argv[2], "no params"); print(t[-800:])
PY
}
for round in r1 r2; do
  reads forward 256 X=1 new-$round; reads forward 256 $ZERO zero-$round; reads forward 256 $OLD old-$round
  reads forward 1024 GPUIO_FORWARD_RINGS=4 new4-$round; reads forward 1024 "GPUIO_FORWARD_RINGS=4 $ZERO" zero4-$round; reads forward 1024 "GPUIO_FORWARD_RINGS=4 $OLD" old4-$round
  reads forward 1024 GPUIO_FORWARD_RINGS=16 new16-$round; reads forward 1024 "GPUIO_FORWARD_RINGS=16 $ZERO" zero16-$round
done
for f in 4 16; do
GPUIO_FORWARD_RINGS=$f timeout 200 $S/a/gpuio bench --backend cuda/forward --only bulk --repeats 1 --json > $R/bulk-f$f.json 2> $R/bulk-f$f.err; echo "bulk f$f rc $?"
grep -E "^  forward:|host CPU" $R/bulk-f$f.err
done
(cd $OUT && tar czf r.tgz r)
