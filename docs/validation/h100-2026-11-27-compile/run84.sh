#!/bin/bash
# run 84 (H100): each built-in kernel compiled alone (nvcc -cubin, the NVRTC options), CPU seconds each, 16 at once.
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
( for n in $(seq 0 32); do echo "$n 33"; done; echo "33 34" ) | timeout 500 xargs -P 16 -n 2 bash -c 'one $0 $1' > $R/times.txt 2>&1
echo "rc $?" >> $R/times.txt
nproc >> $R/times.txt
(cd $OUT && tar czf r.tgz r)
