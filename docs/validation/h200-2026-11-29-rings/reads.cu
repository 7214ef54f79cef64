#include "gpuio.h"
/* params: [0] file size; out: [1] bytes read, [2] failed calls, [3] first start ns, [4] last end ns.
 * Warp w reads 1 MiB chunks w, w + W, ... into its block's 1 MiB of device memory. */
__device__ char reads_buf[132ull << 20];
GPUIO_KERNEL(reads)(const gpuio_channel *ch, gpuio_u64 *params) {
  const gpuio_u64 size = params[0], chunk = 1ull << 20;
  const gpuio_u64 warp = gpuio_global_thread_id() / 32u, warps = gpuio_thread_count() / 32u;
  char *buf = reads_buf + ((gpuio_u64)(blockIdx.x % 132u) << 20);
  gpuio_u64 got_all = 0, bad = 0;
  const gpuio_u64 t0 = gpuio_now_ns();
  for (gpuio_u64 c = warp; c * chunk < size; c += warps) {
    const gpuio_i64 got = gpuio_pread_warp(ch, 0, buf, chunk, (gpuio_i64)(c * chunk));
    if (got != (gpuio_i64)chunk) bad++;
    else got_all += chunk;
  }
  const gpuio_u64 t1 = gpuio_now_ns();
  if ((threadIdx.x & 31u) == 0u) {
    atomicAdd((unsigned long long *)&params[1], (unsigned long long)got_all);
    if (bad) atomicAdd((unsigned long long *)&params[2], (unsigned long long)bad);
    atomicMin((unsigned long long *)&params[3], (unsigned long long)t0);
    atomicMax((unsigned long long *)&params[4], (unsigned long long)t1);
  }
}
