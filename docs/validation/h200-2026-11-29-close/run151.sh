#!/bin/bash
R=$OUT/r; mkdir -p $R; export XDG_CACHE_HOME=/tmp/gc
S=.gpucheck/s6
nproc > $R/nproc.txt
st() { # kernel grid block n tag
  timeout 90 $S/st/gpuio run $S/p/$1.cu --backend cuda/direct --grid $2 --block $3 --slots 256 --arg $4 --arg 0 --arg 0xffffffffffffffff --arg 0 --params 18 > $R/$1-$2x$3-$5.log 2>&1
  echo "== $1 $2x$3x$4 $5: $(grep -E 'finished' $R/$1-$2x$3-$5.log | tail -1)"; grep -E "params|rror" $R/$1-$2x$3-$5.log | head -2
}
st stages 1 1 5000 r1; st stages-localw 1 1 5000 r1
nops() { # transport slots env tag
  env $3 timeout 90 $S/new/gpuio run $S/p/nops.cu --backend cuda/$1 --grid 132 --block 1024 --slots $2 --arg 16 --arg 0 --arg 0xffffffffffffffff --arg 0 > $R/nops-$1-s$2-$4.log 2>&1
  echo "== nops $1 slots $2 $3 $4: $(grep -E 'finished' $R/nops-$1-s$2-$4.log | tail -1)"; grep -E "params|rror" $R/nops-$1-s$2-$4.log | head -2
}
dd if=/dev/urandom of=/tmp/rd.bin bs=1M count=2048 status=none; cat /tmp/rd.bin > /dev/null
reads() { # transport slots env tag
  env $3 timeout 90 $S/new/gpuio run $S/p/reads.cu --backend cuda/$1 --grid 132 --block 128 --slots $2 --file src=/tmp/rd.bin:r --arg 2147483648 --arg 0 --arg 0 --arg 0xffffffffffffffff --arg 0 > $R/reads-$1-s$2-$4.log 2>&1
  echo "== reads $1 slots $2 $3 $4: $(grep -E 'finished' $R/reads-$1-s$2-$4.log | tail -1)"; grep -E "params|rror" $R/reads-$1-s$2-$4.log | head -2
}
for round in r1 r2; do
  for n in 16 8 4; do nops forward 1024 GPUIO_FORWARD_RINGS=$n f$n-$round; done
  nops forward 256 X=1 d-$round
  for n in 16 8 4; do nops mailbox 1024 GPUIO_MAILBOX_THREADS=$n m$n-$round; done
  nops mailbox 256 X=1 d-$round
done
for round in r1 r2; do
  for n in 16 8 4; do reads forward 1024 GPUIO_FORWARD_RINGS=$n f$n-$round; done
  reads forward 256 X=1 d-$round
  for n in 16 8 4; do reads mailbox 1024 GPUIO_MAILBOX_THREADS=$n m$n-$round; done
  reads mailbox 256 X=1 d-$round
  reads direct 256 X=1 d-$round; reads direct 1024 X=1 d-$round
done
(cd $OUT && tar czf r.tgz r)
