// Thread 0 makes p[0] NOPs through gpuio's own steps (as gpuio_nop does), timing
// each, and files each under the 4 KiB page of its forward entry (slot index / 64):
// per page, the count, the median (50 ns bins) and the least.
// out: p[8 + 3k] count, p[9 + 3k] median ns, p[10 + 3k] least ns for page k < 16.
#include "gpuio.h"
GPUIO_KERNEL(latpage)(const gpuio_channel *ch, gpuio_u64 *p) {
  if (gpuio_global_thread_id() != 0) return;
  unsigned short hist[16][128];
  for (int k = 0; k < 16; k++)
    for (int b = 0; b < 128; b++) hist[k][b] = 0;
  gpuio_u64 least[16], count[16];
  for (int k = 0; k < 16; k++) { least[k] = ~0ull; count[k] = 0; }
  const gpuio_u64 n = p[0];
  for (gpuio_u64 i = 0; i < n; i++) {
    gpuio_request r = {GPUIO_OP_NOP, 0, 0, 0, 0, 0};
    const gpuio_u64 t0 = gpuio_now_ns();
    gpuio_impl_call c;
    int e = gpuio_impl_check_channel(ch, &c);
    gpuio_slot s;
    if (!e) e = gpuio_impl_acquire_on(ch, &c, &s);
    if (e) { p[1]++; continue; }
    gpuio_i64 res = 0;
    e = gpuio_impl_run(ch, &s, &r, &res);
    if (!e) gpuio_impl_release(ch, &s);
    const gpuio_u64 d = gpuio_now_ns() - t0;
    if (e || res) { p[1]++; continue; }
    const unsigned page = (s.index / 64u) & 15u;
    gpuio_u64 bin = d / 50;
    if (bin > 127) bin = 127;
    hist[page][bin]++;
    count[page]++;
    if (d < least[page]) least[page] = d;
  }
  for (int k = 0; k < 16; k++) {
    gpuio_u64 seen = 0, median = 0;
    for (int b = 0; b < 128; b++) {
      seen += hist[k][b];
      if (count[k] && 2 * seen >= count[k]) { median = (gpuio_u64)b * 50 + 25; break; }
    }
    p[8 + 3 * k] = count[k];
    p[9 + 3 * k] = median;
    p[10 + 3 * k] = least[k];
  }
}
