#!/bin/bash
# Call 6: io_uring 1 MiB writes/reads, 8 in flight, one file, 512 MiB of buffers: WRITE vs WRITE_FIXED,
# plain ring vs SQPOLL, 4 KiB pages vs MADV_HUGEPAGE (no GPU).
R=$OUT/r; mkdir -p $R
timeout 240 ./.gpucheck/m53/fixedprobe /tmp > $R/fixedprobe.txt 2>&1; echo "rc=$?" >> $R/fixedprobe.txt
cat $R/fixedprobe.txt
