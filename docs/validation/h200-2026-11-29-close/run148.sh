#!/bin/bash
R=$OUT/r; mkdir -p $R; export XDG_CACHE_HOME=/tmp/gc
S=.gpucheck/s6
nvidia-smi --query-gpu=name,driver_version,pcie.link.gen.current,pcie.link.width.current --format=csv > $R/gpu.txt 2>&1; uname -r >> $R/gpu.txt
go() { # kernel slots grid block n tag
  timeout 90 $S/st/gpuio run $S/p/$1.cu --backend cuda/direct --grid $3 --block $4 --slots $2 --arg $5 --arg 0 --arg 0xffffffffffffffff --arg 0 --params 18 > $R/$1-s$2-$3x$4-$6.log 2>&1
  echo "== $1 slots $2 $3x$4x$5 $6: $(grep -E 'finished' $R/$1-s$2-$3x$4-$6.log | tail -1)"; grep -E "params|rror" $R/$1-s$2-$3x$4-$6.log | head -2
}
for round in r1 r2; do for k in nops nops-early nops-noclose; do go $k 256 132 1024 16 $round; done; done
for k in stages stages-early stages-noclose; do go $k 256 132 1024 16 r1; done
go stages 1024 132 1024 16 r1
for k in nops nops-early; do go $k 256 1 1 5000 r1; go $k 1024 132 1024 16 r1; done
(cd $OUT && tar czf r.tgz r)
