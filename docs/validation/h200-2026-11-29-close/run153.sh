#!/bin/bash
R=$OUT/r; mkdir -p $R; export XDG_CACHE_HOME=/tmp/gc
S=.gpucheck/s6
go() { # bin kernel transport slots rings tag
  GPUIO_FORWARD_RINGS=$5 timeout 60 $S/$1/gpuio run $S/p/$2.cu --backend cuda/$3 --grid 132 --block 1024 --slots $4 --arg 16 --arg 0 --arg 0xffffffffffffffff --arg 0 > $R/$2-$1-$3-s$4-f$5-$6.log 2>&1
  echo "== $1 $2 $3 slots $4 rings $5 $6: $(grep -E 'finished' $R/$2-$1-$3-s$4-f$5-$6.log | tail -1)"
}
for round in r1 r2; do
  go new nops forward 1024 16 $round
  for k in nops-lapw nops-lap1k nops-lap250 nops-lap4kmax8; do go st $k forward 1024 16 $round; done
  go new nops forward 256 16 $round
  for k in nops-lapw nops-lap1k nops-lap250 nops-lap4kmax8; do go st $k forward 256 16 $round; done
done
for k in nops-lap1k nops-lap250; do go st $k direct 256 16 r1; go st $k direct 1024 16 r1; go st $k mailbox 1024 16 r1; done
go new nops direct 256 16 r1; go new nops direct 1024 16 r1; go new nops mailbox 1024 16 r1
(cd $OUT && tar czf r.tgz r)
