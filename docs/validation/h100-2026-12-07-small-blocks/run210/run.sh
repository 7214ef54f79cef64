#!/bin/bash
# run 210: same build (5caee2d's code): ncu warp-stall profile of the forward NOP anatomy kernel, small-block build on (the default).
R=$OUT/r; mkdir -p $R; export XDG_CACHE_HOME=/tmp/gc
S=.gpucheck/s17; B=$S/h/gpuio
date -u > $R/uname.txt
(nvidia-smi topo -m; lscpu | grep -i -E "numa|model name|socket"; for d in /sys/bus/pci/devices/*; do [ "$(cat $d/vendor 2>/dev/null)" = 0x10de ] && echo "$d numa_node $(cat $d/numa_node)"; done; cat /proc/cmdline) > $R/topo.txt 2>&1
timeout 60 $B bench --backend cuda/forward --only bulk --repeats 1 > /dev/null 2> $R/bulk-forward.err; echo "bulk rc $?"; sed 's/\x1b\[[0-9;]*m//g' $R/bulk-forward.err | grep -E "^  forward: 1 MiB p(read|write)(, whole device| into the staging).*one file  " | cut -c1-120
timeout 170 ncu --clock-control none --replay-mode application --target-processes all -k regex:nop_anatomy -c 1 --section SourceCounters --section WarpStateStats --section LaunchStats --import-source no -o $R/anat -f $B bench --only latency --backend cuda/forward > $R/ncu.log 2>&1; echo "ncu rc $?"; tail -3 $R/ncu.log | cut -c1-200
timeout 40 ncu -i $R/anat.ncu-rep --page source --csv --print-source sass > $R/anat-sass.csv 2> $R/anat-sass.err; echo "sass rc $? $(wc -l < $R/anat-sass.csv)"
timeout 30 ncu -i $R/anat.ncu-rep --page details --csv > $R/anat-details.csv 2>&1
date -u >> $R/uname.txt
(cd $OUT && tar czf r.tgz --exclude='*.ncu-rep' r)
