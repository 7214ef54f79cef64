#!/bin/bash
R=$OUT/r; mkdir -p $R; export XDG_CACHE_HOME=/tmp/gc
S=.gpucheck/s7
(lscpu; echo; lscpu -e; echo; cat /sys/devices/system/node/online; for d in /sys/bus/pci/devices/*; do c=$(cat $d/class); case $c in 0x030*) echo "$d numa $(cat $d/numa_node) local_cpus $(cat $d/local_cpulist)";; esac; done; grep -c processor /proc/cpuinfo; cat /sys/kernel/mm/transparent_hugepage/enabled) > $R/topology.txt 2>&1
nops() { # cpus tag
  GPUIO_FORWARD_RINGS=16 timeout 60 taskset -c $1 $S/fin/gpuio run $S/p/nops.cu --backend cuda/forward --grid 132 --block 1024 --slots 1024 --arg 16 --arg 0 --arg 0xffffffffffffffff --arg 0 > $R/nops-$2.log 2>&1
  python3 - "$R/nops-$2.log" "$2 cpus $1" <<'PY'
import sys,re
t=open(sys.argv[1]).read(); m=re.search(r'params: \[([^\]]*)\]',t)
if m:
    p=[int(x) for x in m.group(1).split(',')]; print("%-28s %6.2f M/s fail %d"%(sys.argv[2],2162688/(p[3]-p[2])*1e3,p[1]))
else: print(sys.argv[2], "no params"); print(t[-600:])
PY
}
for r in 1 2; do
nops 0-3 a$r; nops 4-7 b$r; nops 8-11 c$r; nops 12-15 d$r; nops 0,4,8,12 e$r; nops 0-7 f$r; nops 8-15 g$r; nops 0-15 h$r
done
