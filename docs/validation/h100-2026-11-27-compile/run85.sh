#!/bin/bash
# run 85 (H100): out-of-line engines: each kernel compiled alone; selftest (cold); latency and requests against main, interleaved.
set -u
R=$OUT/r; mkdir -p $R /tmp/parts
cd .gpucheck/p84
one() {
  local n=$1 parts=$2
  local t0=$(date +%s%N)
  local u=$( { TIMEFORMAT="%U %S"; time nvcc -cubin -arch=sm_90 -std=c++17 -I ../../device/include -DGPUIO_CONF_PARTS=$parts -DGPUIO_CONF_PART=$n -x cu conf_seq.h -o /tmp/parts/$n-$parts.cubin > /tmp/parts/$n-$parts.log 2>&1; } 2>&1 )
  local t1=$(date +%s%N)
  echo "$n $parts $u $(( (t1 - t0) / 1000000 ))ms $(stat -c %s /tmp/parts/$n-$parts.cubin 2>/dev/null)"
}
export -f one
( for n in $(seq 0 32); do echo "$n 33"; done; echo "33 34" ) | timeout 150 xargs -P 16 -n 2 bash -c 'one $0 $1' > $R/times.txt 2>&1
echo "rc $?" >> $R/times.txt
nproc >> $R/times.txt

cd ../..
mkdir -p /tmp/gcold /tmp/gcnew
cp -r .gpucheck/gc80/gpuio /tmp/gcold/
B=.gpucheck/m85
chmod +x $B/*
( time XDG_CACHE_HOME=/tmp/gcnew timeout 200 $B/gpuio-ool selftest --backend cuda ) > $R/selftest-ool.log 2>&1; echo "selftest rc $?" >> $R/selftest-ool.log
for pass in 1 2; do
  for b in main ool; do
    c=/tmp/gcold; [ $b = ool ] && c=/tmp/gcnew
    XDG_CACHE_HOME=$c timeout 60 $B/gpuio-$b bench --only latency > $R/lat-$b-$pass.log 2>&1; echo "rc $?" >> $R/lat-$b-$pass.log
  done
done
for b in main ool; do
  [ $SECONDS -gt 430 ] && break
  c=/tmp/gcold; [ $b = ool ] && c=/tmp/gcnew
  XDG_CACHE_HOME=$c timeout 120 $B/gpuio-$b bench --only requests --backend cuda/forward --repeats 1 > $R/req-$b.log 2>&1; echo "rc $?" >> $R/req-$b.log
done
for f in /tmp/gcnew/gpuio/*.cubin; do cuobjdump --dump-resource-usage $f 2>&1 | grep -A1 -E "Function gpuio_k_(nop|queue_send|printf_lines|pwrite_pattern|full_device)\b" ; done > $R/res-ool.txt
ls -la /tmp/gcnew/gpuio > $R/cache-ool.txt
(cd /tmp/gcnew && tar czf $R/cache.tgz gpuio)
(cd $OUT && tar czf r.tgz r)
