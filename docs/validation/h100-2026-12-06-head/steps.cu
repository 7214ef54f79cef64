// One thread's forward NOPs through the library's own memory operations, each timed
// with clock64 (cycles; p[4] = globaltimer ns and p[5] = cycles over the whole loop to
// convert). Variants cycle per NOP: v0 as the library; v1 descriptor loads .gpu
// instead of .sys; v2 give back relaxed (red.relaxed.gpu.and); v3 the fetch-add issued
// with the descriptor loads (its address from the first NOP: what a counter at a fixed
// place would allow). Steps: 0 check loads, 1 acquire's descriptor loads, 2 fetch-add,
// 3 CAS, 4 hold (3 stores, clock, red), 5 submit (entry + st.release.sys), 6 pause 200
// + poll, 7 give back, 8 whole. Out: p[8 + 16 v + k] median cycles of step k.
// Then bare latencies, 64 each, median cycles: p[80] fetch-add, p[81] CAS, p[82]
// ld.relaxed.sys dev, p[83] ld.relaxed.gpu dev, p[84] fence.acq_rel.gpu alone, p[85]
// red.release.gpu alone, p[86] ld.acquire.sys of host memory (the entry stamp), p[87]
// a globaltimer read.
#include "gpuio.h"
#define NV 4
#define NS 9
__device__ unsigned gx_buf[NV][NS][1024];
__device__ gpuio_u64 gx_scratch[64];
GPUIO_FN gpuio_u64 cyc() { gpuio_u64 c; asm volatile("mov.u64 %0, %%clock64;" : "=l"(c)::"memory"); return c; }
/* Waits for v (a store needs its operand) before the clock is read next. */
GPUIO_FN void use(gpuio_u64 v) { asm volatile("st.volatile.global.u64 [%0], %1;" ::"l"(&gx_scratch[40]), "l"(v) : "memory"); }
GPUIO_FN gpuio_u32 ldg32(const gpuio_u32 *p) { gpuio_u32 v; asm volatile("ld.relaxed.gpu.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory"); return v; }
GPUIO_FN gpuio_u64 ldg64(const gpuio_u64 *p) { gpuio_u64 v; asm volatile("ld.relaxed.gpu.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory"); return v; }
GPUIO_FN void and_relaxed(gpuio_u64 *p, gpuio_u64 v) { asm volatile("red.relaxed.gpu.and.b64 [%0], %1;" ::"l"(p), "l"(v) : "memory"); }
__device__ unsigned gx_sort[1024];
GPUIO_FN unsigned median(const unsigned *a, unsigned n) {
  for (unsigned i = 0; i < n; i++) gx_sort[i] = a[i];
  for (unsigned i = 1; i < n; i++) { unsigned x = gx_sort[i], j = i; while (j && gx_sort[j-1] > x) { gx_sort[j] = gx_sort[j-1]; j--; } gx_sort[j] = x; }
  return gx_sort[n / 2];
}
GPUIO_KERNEL(steps)(const gpuio_channel *ch, gpuio_u64 *p) {
  if (gpuio_global_thread_id() != 0) return;
  const unsigned n = p[0] > 1024 ? 1024 : (unsigned)p[0];
  gpuio_u64 *cached_counter = nullptr;
  const gpuio_u64 g0 = gpuio_now_ns(), c00 = cyc();
  for (unsigned i = 0; i < n; i++)
    for (unsigned v = 0; v < NV; v++) {
      gpuio_u64 c[NS + 1];
      c[0] = cyc();
      gpuio_u64 pre = 0;
      if (v == 3 && cached_counter) pre = gpuio_fetch_add_64(cached_counter, 1u);
      const bool closing = gpuio_impl_closing(ch);
      const gpuio_u32 magic = v == 1 ? ldg32(&ch->magic) : gpuio_ld_relaxed_32(&ch->magic);
      const gpuio_u32 version = v == 1 ? ldg32(&ch->version) : gpuio_ld_relaxed_32(&ch->version);
      if (closing || magic != GPUIO_MAGIC || version != GPUIO_ABI_VERSION) { p[2]++; return; }
      c[1] = cyc();
      const gpuio_u32 rings_w = v == 1 ? ldg32(&ch->forward.rings) : gpuio_ld_relaxed_32(&ch->forward.rings);
      const gpuio_u32 slots = v == 1 ? ldg32(&ch->slots) : gpuio_ld_relaxed_32(&ch->slots);
      gpuio_forward_state *st = gpuio_ptr<gpuio_forward_state>(v == 1 ? ldg64(&ch->forward.state) : gpuio_ld_relaxed_64(&ch->forward.state));
      gpuio_turn *turns = gpuio_ptr<gpuio_turn>(v == 1 ? ldg64(&ch->forward.slot_state) : gpuio_ld_relaxed_64(&ch->forward.slot_state));
      gpuio_forward_entry *entries = gpuio_ptr<gpuio_forward_entry>(v == 1 ? ldg64(&ch->forward.entries) : gpuio_ld_relaxed_64(&ch->forward.entries));
      const gpuio_u32 rings = rings_w ? rings_w : 1u;
      const gpuio_u32 per = slots / rings; /* ring 0: warp 0 */
      if ((per & (per - 1u)) || (rings & (rings - 1u))) { p[2] += 1000; return; }
      use((gpuio_u64)st ^ (gpuio_u64)turns ^ (gpuio_u64)entries);
      c[2] = cyc();
      gpuio_u64 pos;
      if (v == 3 && cached_counter) pos = pre; else pos = gpuio_fetch_add_64(&st->reserve, 1u);
      cached_counter = &st->reserve;
      use(pos);
      c[3] = cyc();
      const gpuio_u64 lap = pos >> gpuio_ctz_32(per);
      const gpuio_u32 index = (gpuio_u32)(pos & (per - 1u));
      gpuio_turn *t = turns + index;
      const gpuio_u64 want = gpuio_impl_turn_word(lap, GPUIO_SLOT_FREE);
      const gpuio_u64 w = gpuio_cas_acquire_dev_64(&t->word, want, gpuio_impl_turn_word(lap, GPUIO_SLOT_IN_FLIGHT));
      if (w != want) { p[3]++; return; } /* a lone thread on an idle channel */
      c[4] = cyc();
      gpuio_impl_turn_hold(t, lap);
      c[5] = cyc();
      const gpuio_u64 spos = lap * ((gpuio_u64)per * rings) + index;
      gpuio_forward_entry *e = entries + index;
      gpuio_request r = {GPUIO_OP_NOP, 0, 0, 0, 0, 0};
      e->req = r;
      gpuio_st_release_64(&e->stamp, gpuio_forward_stamp(spos, GPUIO_STAMP_READY));
      c[6] = cyc();
      gpuio_impl_spin_ns(200);
      gpuio_i64 res = 0;
      const gpuio_u64 dl = gpuio_now_ns() + 1000000000ull;
      while (!gpuio_forward_answer(gpuio_ld_acquire_64(&e->stamp), spos, &res))
        if (gpuio_now_ns() > dl) { p[2] += 100000; return; }
      c[7] = cyc();
      if (v == 2) and_relaxed(&t->word, ~GPUIO_TURN_STATE); else gpuio_and_release_dev_64(&t->word, ~GPUIO_TURN_STATE);
      c[8] = cyc();
      c[9] = c[8];
      if (res != 0) p[3] += 1000;
      for (unsigned k = 0; k < NS - 1; k++) gx_buf[v][k][i] = (unsigned)(c[k + 1] - c[k]);
      gx_buf[v][NS - 1][i] = (unsigned)(c[8] - c[0]);
    }
  p[4] = gpuio_now_ns() - g0; p[5] = cyc() - c00;
  for (unsigned v = 0; v < NV; v++) for (unsigned k = 0; k < NS; k++) p[8 + 16 * v + k] = median(gx_buf[v][k], n);
  /* bare latencies */
  unsigned b[8][64];
  gpuio_u64 *x = &gx_scratch[0], *y = &gx_scratch[16];
  const gpuio_forward_entry *e0 = gpuio_ptr<gpuio_forward_entry>(gpuio_ld_relaxed_64(&ch->forward.entries));
  gpuio_u64 sink = 0;
  for (int i = 0; i < 64; i++) {
    gpuio_u64 a = cyc(); sink += gpuio_fetch_add_64(x, 1u); use(sink); gpuio_u64 z = cyc(); b[0][i] = (unsigned)(z - a);
    a = cyc(); sink += gpuio_cas_acquire_dev_64(y, sink, sink + 1); use(sink); z = cyc(); b[1][i] = (unsigned)(z - a);
    a = cyc(); sink += gpuio_ld_relaxed_64(&ch->timeout_ns); use(sink); z = cyc(); b[2][i] = (unsigned)(z - a);
    a = cyc(); sink += ldg64(&ch->timeout_ns); use(sink); z = cyc(); b[3][i] = (unsigned)(z - a);
    a = cyc(); gpuio_fence_dev(); z = cyc(); b[4][i] = (unsigned)(z - a);
    a = cyc(); gpuio_and_release_dev_64(x + 1, ~0ull); z = cyc(); b[5][i] = (unsigned)(z - a);
    a = cyc(); sink += gpuio_ld_acquire_64(&e0->stamp); use(sink); z = cyc(); b[6][i] = (unsigned)(z - a);
    a = cyc(); sink += gpuio_now_ns(); use(sink); z = cyc(); b[7][i] = (unsigned)(z - a);
  }
  for (int k = 0; k < 8; k++) p[80 + k] = median(b[k], 64);
  p[90] = sink & 1;
}
