// One thread's forward NOPs through the library's memory operations, each step timed
// with clock64. Variants cycle per NOP: v0 take by CAS, words then READY released
// (609459a); v1 take by load, words then READY released (c616dcb); v2 take by load,
// fence.acq_rel.sys, words, READY relaxed (the new path of every request but a NOP);
// v3 take by load, words, READY relaxed, no fence (the new NOP). Steps: 0 check +
// descriptor loads, 1 fetch-add, 2 take, 3 hold, 4 submit, 5 pause 350 + poll, 6 give
// back, 7 whole. Out: p[8 + 16 v + k] median cycles of step k. Then bare latencies, 64
// each, median cycles, p[72 + k]: 0 .nc load warm; 1 .nc after fence.acq_rel.gpu; 2 .nc
// after CAS acquire; 3 .nc after and.release; 4 ld.acquire.gpu; 5 ld.relaxed.gpu; 6
// ld.relaxed.sys (device word); 7 CAS acquire; 8 fetch-add; 9 and.release.gpu.
#include "gpuio.h"
#define NV 4
#define NS 8
__device__ unsigned gx_buf[NV][NS][1024];
__device__ gpuio_u64 gx_scratch[64];
GPUIO_FN gpuio_u64 cyc() { gpuio_u64 c; asm volatile("mov.u64 %0, %%clock64;" : "=l"(c)::"memory"); return c; }
GPUIO_FN void use(gpuio_u64 v) { asm volatile("st.volatile.global.u64 [%0], %1;" ::"l"(&gx_scratch[40]), "l"(v) : "memory"); }
GPUIO_FN gpuio_u32 nc32(const gpuio_u32 *p) { gpuio_u32 v; asm volatile("ld.global.nc.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory"); return v; }
GPUIO_FN gpuio_u64 nc64(const gpuio_u64 *p) { gpuio_u64 v; asm volatile("ld.global.nc.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory"); return v; }
GPUIO_FN gpuio_u64 ldg64(const gpuio_u64 *p) { gpuio_u64 v; asm volatile("ld.relaxed.gpu.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory"); return v; }
GPUIO_FN void st_relaxed_dev(gpuio_u64 *p, gpuio_u64 v) { asm volatile("st.relaxed.gpu.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory"); }
__device__ unsigned gx_sort[1024];
GPUIO_FN unsigned median(const unsigned *a, unsigned n) {
  for (unsigned i = 0; i < n; i++) gx_sort[i] = a[i];
  for (unsigned i = 1; i < n; i++) { unsigned x = gx_sort[i], j = i; while (j && gx_sort[j-1] > x) { gx_sort[j] = gx_sort[j-1]; j--; } gx_sort[j] = x; }
  return gx_sort[n / 2];
}
GPUIO_KERNEL(steps2)(const gpuio_channel *ch, gpuio_u64 *p) {
  if (gpuio_global_thread_id() != 0) return;
  const unsigned n = p[0] > 1024 ? 1024 : (unsigned)p[0];
  const gpuio_u64 g0 = gpuio_now_ns(), c00 = cyc();
  for (unsigned i = 0; i < n; i++)
    for (unsigned v = 0; v < NV; v++) {
      gpuio_u64 c[NS + 1];
      c[0] = cyc();
      const bool nc = false;
      const bool closing = gpuio_impl_closing(ch);
      const gpuio_u32 magic = nc ? nc32(&ch->magic) : gpuio_ld_relaxed_32(&ch->magic);
      const gpuio_u32 version = nc ? nc32(&ch->version) : gpuio_ld_relaxed_32(&ch->version);
      const gpuio_u32 rings_w = nc ? nc32(&ch->forward.rings) : gpuio_ld_relaxed_32(&ch->forward.rings);
      const gpuio_u32 slots = nc ? nc32(&ch->slots) : gpuio_ld_relaxed_32(&ch->slots);
      const gpuio_u64 tmo = nc ? nc64(&ch->timeout_ns) : gpuio_ld_relaxed_64(&ch->timeout_ns);
      gpuio_forward_state *st = gpuio_ptr<gpuio_forward_state>(nc ? nc64(&ch->forward.state) : gpuio_ld_relaxed_64(&ch->forward.state));
      gpuio_turn *turns = gpuio_ptr<gpuio_turn>(nc ? nc64(&ch->forward.slot_state) : gpuio_ld_relaxed_64(&ch->forward.slot_state));
      gpuio_forward_entry *entries = gpuio_ptr<gpuio_forward_entry>(nc ? nc64(&ch->forward.entries) : gpuio_ld_relaxed_64(&ch->forward.entries));
      if (closing || magic != GPUIO_MAGIC || version != GPUIO_ABI_VERSION) { p[2]++; return; }
      const gpuio_u32 rings = rings_w ? rings_w : 1u;
      const gpuio_u32 per = slots / rings;
      if ((per & (per - 1u)) || (rings & (rings - 1u))) { p[2] += 1000; return; }
      const gpuio_u64 dl = gpuio_now_ns() + tmo;
      c[1] = cyc();
      const gpuio_u64 pos = gpuio_fetch_add_64(&st->reserve, 1u);
      use(pos);
      c[2] = cyc();
      const gpuio_u64 lap = pos >> gpuio_ctz_32(per);
      const gpuio_u32 index = (gpuio_u32)(pos & (per - 1u));
      gpuio_turn *t = turns + index;
      const gpuio_u64 want = gpuio_impl_turn_word(lap, GPUIO_SLOT_FREE);
      if (v < 1) {
        const gpuio_u64 w = gpuio_cas_acquire_dev_64(&t->word, want, gpuio_impl_turn_word(lap, GPUIO_SLOT_IN_FLIGHT));
        if (w != want) { p[3]++; return; }
        c[3] = cyc();
        gpuio_impl_turn_hold(t, lap);
      } else {
        const gpuio_u64 w = gpuio_ld_acquire_dev_64(&t->word);
        if (w != want) { p[3]++; return; }
        c[3] = cyc();
        gpuio_st_relaxed_64(&t->holder, lap);
        gpuio_st_relaxed_64(&t->since, gpuio_now_ns());
        gpuio_st_relaxed_32(&t->holder_thread, (gpuio_u32)gpuio_global_thread_id());
        st_relaxed_dev(&t->word, gpuio_impl_turn_word(lap + 1u, GPUIO_SLOT_IN_FLIGHT));
      }
      c[4] = cyc();
      const gpuio_u64 spos = lap * ((gpuio_u64)per * rings) + index;
      gpuio_forward_entry *e = entries + index;
      gpuio_request r = {GPUIO_OP_NOP, 0, 0, 0, 0, 0};
      gpuio_u64 ws[GPUIO_FORWARD_WORDS];
      gpuio_forward_encode(&r, ws);
      if (v == 2) gpuio_fence_release();
      for (gpuio_u32 k = 0; k < GPUIO_FORWARD_WORDS; ++k) gpuio_st_relaxed_64(&e->words[k], ws[k]);
      if (v >= 2) gpuio_st_relaxed_64(&e->stamp, gpuio_forward_stamp(spos, GPUIO_STAMP_READY));
      else gpuio_st_release_64(&e->stamp, gpuio_forward_stamp(spos, GPUIO_STAMP_READY));
      c[5] = cyc();
      gpuio_impl_spin_ns(350);
      gpuio_i64 res = 0;
      while (!gpuio_forward_answer(gpuio_ld_acquire_64(&e->stamp), spos, &res))
        if (gpuio_now_ns() > dl) { p[2] += 100000; return; }
      c[6] = cyc();
      gpuio_and_release_dev_64(&t->word, ~GPUIO_TURN_STATE);
      c[7] = cyc();
      if (res != 0) p[3] += 1000;
      for (unsigned k = 0; k < NS - 1; k++) gx_buf[v][k][i] = (unsigned)(c[k + 1] - c[k]);
      gx_buf[v][NS - 1][i] = (unsigned)(c[7] - c[0]);
    }
  p[4] = gpuio_now_ns() - g0; p[5] = cyc() - c00;
  for (unsigned v = 0; v < NV; v++) for (unsigned k = 0; k < NS; k++) p[8 + 16 * v + k] = median(gx_buf[v][k], n);
  unsigned b[10][64];
  gpuio_u64 *x = &gx_scratch[0], *y = &gx_scratch[16];
  const gpuio_u64 *d = &ch->timeout_ns;
  gpuio_u64 sink = nc64(d);
  for (int i = 0; i < 64; i++) {
    gpuio_u64 a, z;
    a = cyc(); sink += nc64(d); use(sink); z = cyc(); b[0][i] = (unsigned)(z - a);
    gpuio_fence_dev(); a = cyc(); sink += nc64(d); use(sink); z = cyc(); b[1][i] = (unsigned)(z - a);
    sink += gpuio_cas_acquire_dev_64(y, sink, sink + 1); a = cyc(); sink += nc64(d); use(sink); z = cyc(); b[2][i] = (unsigned)(z - a);
    gpuio_and_release_dev_64(x + 1, ~0ull); a = cyc(); sink += nc64(d); use(sink); z = cyc(); b[3][i] = (unsigned)(z - a);
    a = cyc(); sink += gpuio_ld_acquire_dev_64(x + 2); use(sink); z = cyc(); b[4][i] = (unsigned)(z - a);
    a = cyc(); sink += ldg64(x + 3); use(sink); z = cyc(); b[5][i] = (unsigned)(z - a);
    a = cyc(); sink += gpuio_ld_relaxed_64(x + 4); use(sink); z = cyc(); b[6][i] = (unsigned)(z - a);
    a = cyc(); sink += gpuio_cas_acquire_dev_64(y, sink, sink + 1); use(sink); z = cyc(); b[7][i] = (unsigned)(z - a);
    a = cyc(); sink += gpuio_fetch_add_64(x, 1u); use(sink); z = cyc(); b[8][i] = (unsigned)(z - a);
    a = cyc(); gpuio_and_release_dev_64(x + 1, ~0ull); z = cyc(); b[9][i] = (unsigned)(z - a);
  }
  for (int k = 0; k < 10; k++) p[72 + k] = median(b[k], 64);
  p[90] = sink & 1;
}
