#!/bin/bash
S=./.gpucheck/s
R=$OUT/r; mkdir -p $R
q() { # bin name env...
  local bin=$1 name=$2; shift 2
  env GPUIO_BENCH_QUEUE_SIZES=64,256,4096 "$@" timeout 150 $S/gpuio-$bin bench --only queues --repeats 1 > $R/q-$bin-$name.txt 2> $R/q-$bin-$name.err
  echo "== $bin $name $* rc=$?" >> $OUT/summary.txt
  grep -E "msg/s; kernel ended" $R/q-$bin-$name.err >> $OUT/summary.txt
  grep -E "queue to host, .* threads|first message|round trip|to device|idle" $R/q-$bin-$name.txt >> $OUT/summary.txt
}
q C default
q D default
q D r32 GPUIO_BENCH_QUEUE_RINGS=32 GPUIO_BENCH_QUEUE_DRAINS=8
q D r128 GPUIO_BENCH_QUEUE_RINGS=128 GPUIO_BENCH_QUEUE_DRAINS=8
for v in "8 4" "32 4" "32 8"; do
  set -- $v
  timeout 120 $S/gpuio-D run $S/printf_flood.cu --grid 132 --block 1024 --arg 16 --params 4 --log-rings $1 --log-threads $2 > /tmp/flood.txt 2> $R/flood.err
  echo "== printf flood D rings $1 threads $2 rc=$? lines=$(wc -l < /tmp/flood.txt)" >> $OUT/summary.txt
  grep -E "M lines/s" $R/flood.err >> $OUT/summary.txt
  rm -f /tmp/flood.txt
done
timeout 400 $S/gpuio-D selftest > $R/selftest.log 2>&1
echo "== selftest rc=$?" >> $OUT/summary.txt
tail -3 $R/selftest.log >> $OUT/summary.txt
grep -iE "fail" $R/selftest.log | head -20 >> $OUT/summary.txt
cd $OUT && tar czf r.tgz r && rm -rf r
