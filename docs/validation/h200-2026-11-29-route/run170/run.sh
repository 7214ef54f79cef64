#!/bin/bash
R=$OUT/r; mkdir -p $R; export XDG_CACHE_HOME=/tmp/gc
S=.gpucheck/s8; B=$S/x/gpuio
grep -o -m1 cldemote /proc/cpuinfo > $R/cld.txt; df -T /tmp > $R/df.txt; lscpu > $R/lscpu.txt
C=GPUIO_X_CLDEMOTE=1
lat() { # backend env tag
  env $2 timeout 150 $B bench --backend cuda/$1 --only latency --repeats 3 > $R/lat-$1-$3.out 2> $R/lat-$1-$3.err; echo "== lat $1 $3 rc $?"
  grep -E "NOP latency p50" $R/lat-$1-$3.err | head -2
}
nops() { # slots slot_size env tag
  env $3 timeout 90 $B run $S/p/nops.cu --backend cuda/forward --grid 132 --block 1024 --slots $1 --slot-size $2 --arg 16 --arg 0 --arg 0xffffffffffffffff --arg 0 > $R/nops-$4.log 2>&1
  python3 - "$R/nops-$4.log" "$4" <<'PY'
import sys,re
t=open(sys.argv[1]).read(); m=re.search(r'params: \[([^\]]*)\]',t); c=re.search(r'host CPU ([0-9.]+m?s)',t)
if m:
    p=[int(x) for x in m.group(1).split(',')]; print("nops %-14s %6.2f M/s fail %d cpu %s"%(sys.argv[2],2162688/(p[3]-p[2])*1e3,p[1],c.group(1) if c else '?'))
else: print(sys.argv[2], "no params"); print(t[-800:])
PY
}
writes() { # transport slots env tag
  rm -f /tmp/w.bin; sync
  env $3 timeout 90 $B run $S/p/writes.cu --backend cuda/$1 --grid 132 --block 128 --slots $2 --slot-size 1048576 --file dst=/tmp/w.bin:w --arg 2147483648 --arg 0 --arg 0 --arg 0xffffffffffffffff --arg 0 > $R/writes-$4.log 2>&1
  python3 - "$R/writes-$4.log" "$4" <<'PY'
import sys,re
t=open(sys.argv[1]).read(); m=re.search(r'params: \[([^\]]*)\]',t); c=re.search(r'host CPU ([0-9.]+m?s)',t); s=re.search(r'transport: ([^\n]*)',t)
if m:
    p=[int(x) for x in m.group(1).split(',')]; print("writes %-16s %6.2f GB/s fail %d cpu %s [%s]"%(sys.argv[2],p[1]/(p[4]-p[3]),p[2],c.group(1) if c else '?', s.group(1) if s else ''))
else: print(sys.argv[2], "no params"); print(t[-800:])
PY
}
href() { # buffer MiB tag
  rm -f /tmp/ref.bin; sync
  python3 -c "
import os,time
n=$1; b=bytearray(os.urandom(1<<20))*n; m=memoryview(b)
fd=os.open('/tmp/ref.bin',os.O_WRONLY|os.O_CREAT|os.O_TRUNC); t=time.perf_counter()
for i in range(2048):
    j=i%n; os.pwrite(fd,m[j<<20:(j+1)<<20],i<<20)
d=time.perf_counter()-t; print('host thread from %d MiB: %.2f GB/s'%(n,2048*(1<<20)/d/1e9))"
}
for round in 1 2; do
  lat forward X=1 base$round; lat forward $C cld$round
  nops 256 65536 X=1 def-base$round; nops 256 65536 $C def-cld$round
  nops 256 65536 "GPUIO_FORWARD_RINGS=16" r16-base$round; nops 256 65536 "GPUIO_FORWARD_RINGS=16 $C" r16-cld$round
  nops 1024 1048576 X=1 bulk-base$round; nops 1024 1048576 $C bulk-cld$round
done
lat mailbox X=1 base1; lat mailbox $C cld1
for round in 1 2; do
  href 1 hot$round; href 512 cold$round
  for s in 16 32 64 128 256 1024; do writes forward $s X=1 fwd-s$s-$round; done
  writes forward 64 $C fwd-s64-cld$round
  writes direct 64 X=1 dir-s64-$round; writes direct 1024 X=1 dir-s1024-$round
done
(cd $OUT && tar czf r.tgz r)
