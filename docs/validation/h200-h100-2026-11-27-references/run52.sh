#!/bin/bash
# Call 5 of 2026-11-27 (second stop), on an H100 (nvidia-h100-x1), main 2d57eb6: the whole bench,
# 3 repeats; then, time left, direct requests with iou-sqp / iou-wrk pinned to different cores.
S=./.gpucheck/m50
T0=$(date +%s)
mkdir -p /tmp/gc/gcache; cp -r .gpucheck/gc/gcache/. /tmp/gc/gcache/ 2>/dev/null; rm -f /tmp/gc/gcache/gpuio/calibration.json
export XDG_CACHE_HOME=/tmp/gc/gcache
R=$OUT/r; mkdir -p $R
pack() { (cd $OUT && tar czf r.tgz r); }
{ nvidia-smi --query-gpu=name,driver_version,pcie.link.gen.current,pcie.link.width.current --format=csv; uname -r; lscpu; lscpu -p=CPU,CORE,SOCKET,NODE; } > $R/machine.txt 2>&1
timeout 540 $S/gpuio-main bench --repeats 3 --plot $R/bench.svg > $R/bench.log 2> $R/bench.err
echo "== bench rc=$? $(( $(date +%s)-T0 )) s" >> $R/bench.log; pack
pin() { # pid sqcpu wrkcpu
  while kill -0 $1 2>/dev/null; do for d in /proc/$1/task/*; do case "$(cat $d/comm 2>/dev/null)" in
    iou-sqp*) taskset -pc $2 ${d##*/};; iou-wrk*) taskset -pc $3 ${d##*/};; esac; done >> $R/pin.txt 2>&1; sleep 0.1; done; }
c2=$(lscpu -p=CPU,CORE | awk -F, '$1==2{print $2}'); w=$(lscpu -p=CPU,CORE | awk -F, -v c=$c2 '!/^#/ && $1>3 && $2!=c {print $1; exit}')
for mode in plain pinned plain2; do
  left=$(( T0 + 590 - $(date +%s) )); [ $left -lt 50 ] && break
  timeout $left $S/gpuio-main bench --only requests --backend cuda/direct --repeats 1 > $R/direct-$mode.log 2>&1 &
  p=$!; sleep 0.3; bp=$(pgrep -P $p gpuio- || echo $p)
  [ $mode = pinned ] && pin $bp 2 $w
  wait $p; echo "== direct $mode (sqp cpu 2, wrk cpu $w) rc=$?" >> $R/bench.log
  grep -E "direct: 1 MiB p|also vs the same io_uring work driven by one CPU thread \(8 in flight, buffers" $R/direct-$mode.log >> $R/bench.log; pack
done
tail -30 $R/bench.log
