// One thread's NOPs through gpuio's own steps, its wait starting with a pause of D ns
// before the first poll (D cycling through 10 values, p[0] NOPs each, p[1] cycles),
// or the library's own wait (index 10). Per index k: p[8+4k] count, p[9+4k] median
// round trip ns, p[10+4k] median wait (submit end to answer seen), p[11+4k] least.
#include "gpuio.h"
#define ND 11
static const unsigned gpuio_x_d[ND] = {0, 100, 200, 300, 400, 500, 600, 800, 1000, 1400, 0};
GPUIO_KERNEL(latd)(const gpuio_channel *ch, gpuio_u64 *p) {
  if (gpuio_global_thread_id() != 0) return;
  unsigned short hist[ND][200], whist[ND][200];
  gpuio_u64 least[ND], count[ND];
  for (int k = 0; k < ND; k++) {
    least[k] = ~0ull; count[k] = 0;
    for (int b = 0; b < 200; b++) hist[k][b] = whist[k][b] = 0;
  }
  for (gpuio_u64 cyc = 0; cyc < p[1]; cyc++)
    for (int k = 0; k < ND; k++)
      for (gpuio_u64 i = 0; i < p[0]; i++) {
        gpuio_request r = {GPUIO_OP_NOP, 0, 0, 0, 0, 0};
        const gpuio_u64 t0 = gpuio_now_ns();
        gpuio_impl_call c;
        int e = gpuio_impl_check_channel(ch, &c);
        gpuio_slot s;
        if (!e) e = gpuio_impl_acquire_on(ch, &c, &s);
        if (e) { p[2]++; continue; }
        gpuio_i64 res = 0;
        const gpuio_u64 deadline = gpuio_now_ns() + 1000000000ull;
        gpuio_impl_submit(ch, &s, &r);
        const gpuio_u64 ts = gpuio_now_ns();
        if (k == ND - 1) {
          e = gpuio_impl_wait(ch, &s, deadline, &res);
        } else {
          const gpuio_u64 until = ts + gpuio_x_d[k];
          while (gpuio_now_ns() < until) {}
          while (!gpuio_impl_poll(ch, &s, &res)) {
            if (gpuio_now_ns() > deadline) { e = -GPUIO_ETIMEDOUT; break; }
          }
        }
        const gpuio_u64 tw = gpuio_now_ns();
        if (!e) gpuio_impl_release(ch, &s);
        const gpuio_u64 d = gpuio_now_ns() - t0;
        if (e || res) { p[2]++; continue; }
        gpuio_u64 bin = d / 50, wbin = (tw - ts) / 50;
        hist[k][bin > 199 ? 199 : bin]++;
        whist[k][wbin > 199 ? 199 : wbin]++;
        count[k]++;
        if (d < least[k]) least[k] = d;
      }
  for (int k = 0; k < ND; k++) {
    gpuio_u64 seen = 0, ws = 0, median = 0, wmed = 0;
    for (int b = 0; b < 200; b++) {
      seen += hist[k][b];
      if (!median && count[k] && 2 * seen >= count[k]) median = (gpuio_u64)b * 50 + 25;
      ws += whist[k][b];
      if (!wmed && count[k] && 2 * ws >= count[k]) wmed = (gpuio_u64)b * 50 + 25;
    }
    p[8 + 4 * k] = count[k];
    p[9 + 4 * k] = median;
    p[10 + 4 * k] = wmed;
    p[11 + 4 * k] = least[k];
  }
}
