#!/bin/bash
R=$OUT/r; mkdir -p $R; export XDG_CACHE_HOME=/tmp/gc
S=.gpucheck/s7
nproc > $R/nproc.txt; nvidia-smi -q | grep -i -E "Product Name|Link Width|Link Gen" | head -8 > $R/gpu.txt
dd if=/dev/urandom of=/tmp/rd.bin bs=1M count=2048 status=none; cat /tmp/rd.bin > /dev/null
OLD=GPUIO_FORWARD_INLINE_READS=18446744073709551615
reads() { # transport slots env tag
  env $3 timeout 90 $S/a/gpuio run $S/p/reads.cu --backend cuda/$1 --grid 132 --block 128 --slots $2 --file src=/tmp/rd.bin:r --arg 2147483648 --arg 0 --arg 0 --arg 0xffffffffffffffff --arg 0 > $R/reads-$1-s$2-$4.log 2>&1
  echo "== reads $1 slots $2 $3 $4: $(grep -E 'finished|host CPU' $R/reads-$1-s$2-$4.log | tail -2 | tr '\n' ' ')"; grep -E "params|rror" $R/reads-$1-s$2-$4.log | head -2
}
nops() { # transport slots env tag
  env $3 timeout 90 $S/a/gpuio run $S/p/nops.cu --backend cuda/$1 --grid 132 --block 1024 --slots $2 --arg 16 --arg 0 --arg 0xffffffffffffffff --arg 0 > $R/nops-$1-s$2-$4.log 2>&1
  echo "== nops $1 slots $2 $3 $4: $(grep -E 'finished|host CPU' $R/nops-$1-s$2-$4.log | tail -2 | tr '\n' ' ')"; grep -E "params|rror" $R/nops-$1-s$2-$4.log | head -2
}
for round in r1 r2; do
  reads forward 256 X=1 new-$round; reads forward 256 $OLD old-$round
  reads forward 1024 GPUIO_FORWARD_RINGS=4 new4-$round; reads forward 1024 "GPUIO_FORWARD_RINGS=4 $OLD" old4-$round
  reads forward 1024 GPUIO_FORWARD_RINGS=16 new16-$round; reads forward 1024 "GPUIO_FORWARD_RINGS=16 $OLD" old16-$round
  reads direct 256 X=1 d-$round
  nops forward 1024 GPUIO_FORWARD_RINGS=4 new4-$round; nops forward 256 X=1 new-$round
done
timeout 240 $S/a/gpuio bench --only bulk --repeats 1 --json > $R/bulk-new.json 2> $R/bulk-new.err; echo "bulk rc $?"
(cd $OUT && tar czf r.tgz r)
