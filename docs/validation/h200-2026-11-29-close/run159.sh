#!/bin/bash
R=$OUT/r; mkdir -p $R; export XDG_CACHE_HOME=/tmp/gc
S=.gpucheck/s6
(lscpu; echo; cat /proc/cmdline; echo; ls /sys/class/iommu 2>&1; dmesg 2>/dev/null | grep -i -m5 iommu) > $R/host.txt 2>&1
go() { # bin kernel transport slots rings tag
  GPUIO_FORWARD_RINGS=$5 GPUIO_MAILBOX_THREADS=$5 timeout 60 $S/$1/gpuio run $S/p/$2.cu --backend cuda/$3 --grid 132 --block 1024 --slots $4 --arg 16 --arg 0 --arg 0xffffffffffffffff --arg 0 --params 16 > $R/$2-$1-$3-s$4-f$5-$6.log 2>&1
}
for r in r1 r2; do
  for b in st pace2 pace10; do go $b nops forward 1024 16 $r; done
  for b in st pace2; do go $b nops forward 1024 4 $r; done
  for b in st pace2 pace10; do go $b nops forward 256 16 $r; done
  for b in st pace2 pace10; do go $b nops mailbox 1024 16 $r; done
  for b in st pace2; do go $b nops mailbox 256 16 $r; done
done
for b in st pace2 pace10; do timeout 100 $S/$b/gpuio bench --only latency --repeats 3 > $R/lat-$b.log 2>&1; done
(cd $OUT && tar czf r.tgz r)
cd $R && for f in nops*.log; do python3 - "$f" <<'PY'
import sys,re
f=sys.argv[1]; t=open(f).read()
m=re.search(r'params: \[([^\]]*)\]',t); c=re.search(r'host CPU ([0-9.]+m?s)',t)
if m:
    p=[int(x) for x in m.group(1).split(',')]; d=p[3]-p[2]; print("%-44s %8.2f M/s fail %d  cpu %s"%(f,2162688/d*1e3,p[1], c.group(1) if c else '?'))
PY
done
grep -h "NOP latency p50" lat-*.log; head -20 host.txt
