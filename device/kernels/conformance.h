/* Conformance kernels: the same cases on every backend and transport.
 *
 * Written once against gpuio.h; the CPU device compiles them as host C++ at build
 * time (device/cpu/kernels.cpp), GPU backends compile them at run time. Every
 * kernel takes (channel, params): params is an array of u64 the host fills and
 * reads back; outputs are counted with device atomics.
 *
 * The pattern and the sizes below are the specification the host checks against
 * (gpuio_device::kernels mirrors them in Rust).
 */
#ifndef GPUIO_CONFORMANCE_H
#define GPUIO_CONFORMANCE_H

/* In parts from GPUIO_CONF_FIRST_OUT_OF_LINE on (below), the header's engines are
 * compiled out of line. */
#define GPUIO_CONF_FIRST_OUT_OF_LINE 5
#if defined(GPUIO_CONF_PARTS) && GPUIO_CONF_PARTS == 8 && GPUIO_CONF_PART >= GPUIO_CONF_FIRST_OUT_OF_LINE
#define GPUIO_OUT_OF_LINE 1
#endif
#include "gpuio.h"
#if defined(GPUIO_TARGET_HOST)
#include <stdio.h> /* printf for gpuio_k_native_printf; CUDA and HIP have it built in */
#endif

/* Which kernels this compile defines. A GPU backend compiles this file in
 * GPUIO_CONF_PARTS parts at once (both defined ahead of the file), part
 * GPUIO_CONF_PART holding the kernels marked GPUIO_CONF_IN(n) with n % parts equal
 * to it, so that the kernels build on several cores: in one piece they were one
 * NVRTC compile of 435 s on an H100's host (2026-11-27). Parts 0-4 hold the kernels
 * that make few calls each (the bench's among them), with their engines inline;
 * parts 5-7 (GPUIO_CONF_FIRST_OUT_OF_LINE on) the six that test many calls each
 * (bad input, misuse, limits, the rulebook), compiled with GPUIO_OUT_OF_LINE
 * (gpuio.h, "Compile time"). The marks balance the parts by each kernel's compile
 * time alone (H100 host, 2026-11-27, nvcc with NVRTC's options: inline 0.4-17.5 s
 * of CPU for the first kind, about 22 s a part; out of line 3.9-12.7 s for the
 * second, 17-19 s a part, where inline they took 34-75 s each). The eight, compiled
 * together by NVRTC: about 18 s, against 75-94 s with every kernel inline and the
 * marks round 0..7 in file order. Without GPUIO_CONF_PARTS, every kernel. */
#ifndef GPUIO_CONF_PARTS
#define GPUIO_CONF_PARTS 0
#define GPUIO_CONF_PART 0
#endif
#define GPUIO_CONF_IN(n) (GPUIO_CONF_PARTS == 0 || GPUIO_CONF_PART == (n) % GPUIO_CONF_PARTS)

/* Each thread owns [thread * GPUIO_CONF_REGION, +GPUIO_CONF_REGION) of the file. */
#define GPUIO_CONF_REGION (4ull << 20)

/* The byte expected at file offset `off`. */
GPUIO_FN gpuio_u8 gpuio_conf_byte(gpuio_u64 off) { return (gpuio_u8)((off * 131u) ^ ((off >> 11) * 7u) ^ 0x5a); }

/* Size of write `i` of `thread`: 1 B first, every 125th a large one (1 MiB down to
 * 8 KiB, rotating), the rest 1 B .. 2 KiB. */
GPUIO_FN gpuio_u32 gpuio_conf_size(gpuio_u64 thread, gpuio_u64 i) {
  if (i == 0) return 1;
  if (i % 125 == 124) return (1u << 20) >> ((i / 125 + thread) % 8);
  gpuio_u64 h = (thread * 1000003ull + i) * 0x9E3779B97F4A7C15ull;
  return 1 + (gpuio_u32)((h >> 40) % 2048);
}

/* Records a failure: count it, keep the first errno. */
GPUIO_FN void gpuio_conf_fail(gpuio_u64 *count, gpuio_u64 *first, gpuio_i64 res) {
  if (gpuio_fetch_add_64(count, 1) == 0) gpuio_st_relaxed_64(first, (gpuio_u64)res);
}

/* params: [0] endpoint, [1] source bytes (device pointer; byte o is the file's byte o),
 *         [2] writes per thread; out: [3] failures, [4] first failure, [5] bytes written */
#if GPUIO_CONF_IN(0)
GPUIO_KERNEL(gpuio_k_pwrite_pattern)(const gpuio_channel *ch, gpuio_u64 *p) {
  gpuio_u64 t = gpuio_global_thread_id();
  const char *src = (const char *)p[1];
  gpuio_u64 off = t * GPUIO_CONF_REGION, bytes = 0;
  for (gpuio_u64 i = 0; i < p[2]; i++) {
    gpuio_u32 n = gpuio_conf_size(t, i);
    gpuio_i64 r = gpuio_pwrite(ch, (gpuio_u32)p[0], src + off, n, (gpuio_i64)off);
    if (r != (gpuio_i64)n) gpuio_conf_fail(&p[3], &p[4], r);
    else bytes += n;
    off += n;
  }
  gpuio_fetch_add_64(&p[5], bytes);
}
#endif

/* params: [0] endpoint, [1] destination (device pointer, laid out like the file),
 *         [2] reads per thread; out: [3] failures, [4] first failure, [5] bytes read */
#if GPUIO_CONF_IN(1)
GPUIO_KERNEL(gpuio_k_pread_pattern)(const gpuio_channel *ch, gpuio_u64 *p) {
  gpuio_u64 t = gpuio_global_thread_id();
  char *dst = (char *)p[1];
  gpuio_u64 off = t * GPUIO_CONF_REGION, bytes = 0;
  for (gpuio_u64 i = 0; i < p[2]; i++) {
    gpuio_u32 n = gpuio_conf_size(t, i);
    gpuio_i64 r = gpuio_pread(ch, (gpuio_u32)p[0], dst + off, n, (gpuio_i64)off);
    if (r != (gpuio_i64)n) gpuio_conf_fail(&p[3], &p[4], r);
    else bytes += n;
    off += n;
  }
  gpuio_fetch_add_64(&p[5], bytes);
}
#endif

/* params: [0] lines per thread; out: [1] failures, [2] first failure.
 * Line i of thread t: "t=<t> i=<i> <the same conversions the host checks>\n". */
#if GPUIO_CONF_IN(1)
GPUIO_KERNEL(gpuio_k_printf_lines)(const gpuio_channel *ch, gpuio_u64 *p) {
  int t = (int)gpuio_global_thread_id();
  for (int i = 0; i < (int)p[0]; i++) {
    gpuio_i64 r = gpuio_printf(ch, "t=%d i=%d x=%#x s=%-6s f=%.3f e=%e %c%%\n", t, i, t * 1000 + i, "ok", i * 0.25,
                               (double)t * 1e10, 'A' + (i % 26));
    if (r <= 0) gpuio_conf_fail(&p[1], &p[2], r);
  }
}
#endif

/* Bad input, one case per result, then proof the channel still works.
 * params: [0] writable file endpoint, [1] read-only endpoint, [2] the file's raw fd
 *         (direct only), out: [3..] one result per case (see gpuio_device::kernels). */
#if GPUIO_CONF_IN(6)
GPUIO_KERNEL(gpuio_k_bad_input)(const gpuio_channel *ch, gpuio_u64 *p) {
  if (gpuio_global_thread_id() != 0) return;
  gpuio_u32 ep = (gpuio_u32)p[0], ro = (gpuio_u32)p[1];
  gpuio_i64 *out = (gpuio_i64 *)&p[3];
  char x[64];
  for (int i = 0; i < 64; i++) x[i] = 'B';
  gpuio_u64 far = ch->staging_len - 8;
  /* Through the checked calls: the header refuses these before any submission. */
  out[0] = gpuio_pwrite(ch, ch->endpoint_count, x, 64, 0);     /* unregistered endpoint: -EBADF */
  out[1] = gpuio_pwrite_staged(ch, ep, far, 64, 0);            /* staging range outside: -EFAULT */
  out[2] = gpuio_pwrite(ch, ep, x, 0, 0);                      /* length 0: -EINVAL */
  out[3] = gpuio_pwrite_staged(ch, ep, 0, ch->staging_len + 1, 0); /* longer than staging: -EINVAL */
  out[4] = gpuio_pwrite(ch, ro, x, 64, 0);                     /* read-only endpoint: -EBADF */
  /* Bypassing the header's checks: the host (forward, mailbox) or the ring's
   * registration and restrictions (direct) must refuse them. */
  gpuio_request r0 = {GPUIO_OP_PWRITE, ch->endpoint_count + 5, 64, 0, 0, 0};
  out[5] = gpuio_impl_request_raw(ch, &r0);                         /* unregistered: -EBADF */
  gpuio_request r1 = {GPUIO_OP_PWRITE, ep, 64, 0, ch->staging_len + 4096, 0};
  out[6] = gpuio_impl_request_raw(ch, &r1);                         /* outside staging: -EFAULT */
  gpuio_request r2 = {GPUIO_OP_PWRITE, ep, (gpuio_u32)(ch->staging_len + 1), 0, 0, 0};
  out[7] = gpuio_impl_request_raw(ch, &r2);                         /* longer than staging: -EINVAL / -EFAULT */
  /* Direct ring only: raw SQEs the restrictions must refuse. */
  out[8] = 1;
  out[9] = 1;
#ifdef GPUIO_DIRECT_RAW_SQE
  if (ch->transport == GPUIO_TRANSPORT_DIRECT) {
    gpuio_sqe plain = {};
    plain.opcode = GPUIO_IORING_OP_WRITE; /* a raw fd, no IOSQE_FIXED_FILE */
    plain.fd = (gpuio_i32)p[2];
    plain.addr = ch->staging_host;
    plain.len = 64;
    out[8] = gpuio_direct_raw_sqe(ch, &plain);
    gpuio_sqe openat = {};
    openat.opcode = 18; /* IORING_OP_OPENAT: not an opcode gpuio allows */
    openat.flags = GPUIO_IOSQE_FIXED_FILE;
    openat.fd = 0;
    out[9] = gpuio_direct_raw_sqe(ch, &openat);
  }
#endif
  /* Still usable: 5 bytes at offset 4096. */
  out[10] = gpuio_pwrite(ch, ep, "alive", 5, 4096);
}
#endif

/* Writes until the channel closes. params: [0] endpoint, [1] source bytes, [2] max
 * writes per thread, [3] write size; out: [4] ok, [5] -ESHUTDOWN seen, [6] other
 * failures, [7] first other failure, [8] timeouts, [16 + t] writes thread t saw
 * succeed (they are its first ones: a thread stops at its first shutdown or
 * timeout). Write i of thread t goes to t * GPUIO_CONF_REGION + (i * size) %
 * GPUIO_CONF_REGION. */
#if GPUIO_CONF_IN(4)
GPUIO_KERNEL(gpuio_k_until_closed)(const gpuio_channel *ch, gpuio_u64 *p) {
  gpuio_u64 t = gpuio_global_thread_id();
  const char *src = (const char *)p[1];
  gpuio_u64 n = p[3], ok = 0;
  for (gpuio_u64 i = 0; i < p[2]; i++) {
    gpuio_u64 off = t * GPUIO_CONF_REGION + (i * n) % GPUIO_CONF_REGION;
    gpuio_i64 r = gpuio_pwrite(ch, (gpuio_u32)p[0], src + off, n, (gpuio_i64)off);
    if (r == (gpuio_i64)n) {
      ok++;
    } else if (r == -GPUIO_ESHUTDOWN) {
      gpuio_fetch_add_64(&p[5], 1);
      break;
    } else if (r == -GPUIO_ETIMEDOUT) {
      gpuio_fetch_add_64(&p[8], 1);
      break;
    } else {
      gpuio_conf_fail(&p[6], &p[7], r);
      break;
    }
  }
  gpuio_fetch_add_64(&p[4], ok);
  gpuio_st_relaxed_64(&p[16 + t], ok);
}
#endif

/* params: [0] NOPs per thread; out: [1] failures, [2] first failure. */
#if GPUIO_CONF_IN(3)
GPUIO_KERNEL(gpuio_k_nop)(const gpuio_channel *ch, gpuio_u64 *p) {
  for (gpuio_u64 i = 0; i < p[0]; i++) {
    gpuio_i64 r = gpuio_nop(ch);
    if (r != 0) gpuio_conf_fail(&p[1], &p[2], r);
  }
}
#endif

/* Latency, one call at a time, each timed on the device (gpuio_bench).
 * params: [0] calls, [1] 0: NOP, 1: a 64-byte pwrite at offset 0 of endpoint [2],
 *         [3] shared memory for the durations (u32 nanoseconds per call, saturated);
 * out: [4] failures, [5] first failure. Thread 0 only. */
#if GPUIO_CONF_IN(1)
GPUIO_KERNEL(gpuio_k_latency)(const gpuio_channel *ch, gpuio_u64 *p) {
  if (gpuio_global_thread_id() != 0) return;
  gpuio_u32 *ns = (gpuio_u32 *)p[3];
  char buf[64];
  for (int i = 0; i < 64; i++) buf[i] = (char)('a' + i % 26);
  /* The parameters are read once, before the clock starts: read inside the loop, each
   * was a load from L2 in every timed call (a call's acquire empties L1). */
  const gpuio_u64 calls = p[0];
  const bool pwrite = p[1] != 0;
  const gpuio_u32 ep = (gpuio_u32)p[2];
  const gpuio_i64 want = pwrite ? 64 : 0;
  for (gpuio_u64 i = 0; i < calls; i++) {
    const gpuio_u64 t0 = gpuio_now_ns();
    const gpuio_i64 r = pwrite ? gpuio_pwrite(ch, ep, buf, 64, 0) : gpuio_nop(ch);
    const gpuio_u64 d = gpuio_now_ns() - t0;
    gpuio_st_relaxed_32(&ns[i], d > 0xffffffffull ? 0xffffffffu : (gpuio_u32)d);
    if (r != want) gpuio_conf_fail(&p[4], &p[5], r);
  }
}
#endif

/* Where one NOP's time goes, step by step (gpuio bench prints the medians): thread 0
 * makes p[0] NOPs through the same steps as gpuio_nop (gpuio_impl_request_staged)
 * and stores each step's nanoseconds at p[1] (u32s, step-major: step k of call i at
 * k * p[0] + i): 0 the channel check (the host's `closing`), 1 taking a slot or port,
 * 2 submitting, 3 waiting for the answer, 4 giving the slot back. out: [2] failures,
 * [3] the last failure's result, [4] the calls whose first read (after the
 * first-poll pause) found the answer: the wait's first poll, made here, then the
 * wait itself where it did not. */
#define GPUIO_CONF_ANATOMY_STEPS 5u
#if GPUIO_CONF_IN(2)
GPUIO_KERNEL(gpuio_k_nop_anatomy)(const gpuio_channel *ch, gpuio_u64 *p) {
  if (gpuio_global_thread_id() != 0) return;
  gpuio_u32 *ns = (gpuio_u32 *)p[1];
  const gpuio_u64 n = p[0];
  gpuio_u64 first_hits = 0; /* stored once, at the end: p is host memory */
  for (gpuio_u64 i = 0; i < n; i++) {
    gpuio_u64 t[GPUIO_CONF_ANATOMY_STEPS + 1];
    gpuio_request r = {GPUIO_OP_NOP, 0, 0, 0, 0, 0};
    gpuio_slot s;
    gpuio_i64 result = 0;
    t[0] = gpuio_now_ns();
    gpuio_impl_call c;
    int e = gpuio_impl_check_channel(ch, &c);
    if (!e) e = gpuio_impl_check_request(ch, &r);
    t[1] = gpuio_now_ns();
    if (!e) e = gpuio_impl_acquire_on(ch, &c, &s);
    t[2] = gpuio_now_ns();
    /* As gpuio_impl_run: the deadline before the submit, the pause right after it.
     * (Read between the two, the descriptor's timeout lengthened the pause by a trip
     * to L2, and the steps' sum ran ~0.8 us under gpuio_nop's round trip on mailbox:
     * H100, 2026-12-06, run 196.) */
    const gpuio_u64 deadline = e ? 0u : gpuio_impl_deadline_after(s.timeout_ns);
    if (!e) gpuio_impl_submit(ch, &s, &r);
    t[3] = gpuio_now_ns();
    if (!e) gpuio_impl_first_poll_pause(&s);
    if (!e) {
      if (gpuio_impl_poll(ch, &s, &result)) first_hits++;
      else e = gpuio_impl_wait(ch, &s, deadline, &result);
    }
    t[4] = gpuio_now_ns();
    if (!e) gpuio_impl_release(ch, &s);
    t[5] = gpuio_now_ns();
    if (e || result != 0) gpuio_conf_fail(&p[2], &p[3], e ? e : result);
    for (gpuio_u32 k = 0; k < GPUIO_CONF_ANATOMY_STEPS; k++) {
      const gpuio_u64 d = t[k + 1] - t[k];
      gpuio_st_relaxed_32(&ns[k * n + i], d > 0xffffffffull ? 0xffffffffu : (gpuio_u32)d);
    }
  }
  p[4] = first_hits;
}
#endif

/* The latency floor of any round trip: thread 0 and a host thread take turns
 * through two words of shared memory (gpuio_bench). For round i = 1.. the device
 * stores ping = i (release), waits p[3] ns, then polls for pong == i (acquire)
 * without a pause between polls. The bench runs it with several first pauses and
 * takes the fastest: the floor is the fastest round trip. (H100, 2026-12-06, run
 * 194: polling from the store on, 3.07-3.39 us a round; with the first poll 300 ns
 * after the store, 2.25-2.39; 1.0 us after the round began, the store taking most
 * of that, 2.14-2.30: a read right behind the store reaches host memory before the
 * host answered. 2026-11-28: 2.98-3.30 us without a pause between polls against
 * 3.02-3.41 with a 64 ns nanosleep, as this kernel had.)
 * params: [0] shared memory: u64 ping at +0, u64 pong at +64; [1] rounds; [3] the
 * pause before the first poll, ns; out: [2] 1 if a round waited more than a second
 * (then it stops). */
#if GPUIO_CONF_IN(1)
GPUIO_KERNEL(gpuio_k_pingpong)(const gpuio_channel *ch, gpuio_u64 *p) {
  (void)ch;
  if (gpuio_global_thread_id() != 0) return;
  gpuio_u64 *ping = (gpuio_u64 *)p[0], *pong = ping + 8;
  const gpuio_u64 pause = p[3];
  for (gpuio_u64 i = 1; i <= p[1]; i++) {
    gpuio_st_release_64(ping, i);
    gpuio_impl_spin_ns(pause);
    const gpuio_u64 deadline = gpuio_now_ns() + 1000000000ull;
    while (gpuio_ld_acquire_64(pong) != i) {
      if (gpuio_now_ns() > deadline) {
        gpuio_st_relaxed_64(&p[2], 1);
        return;
      }
#if defined(GPUIO_TARGET_HOST)
      gpuio_pause(); /* emulated threads give the core away to the host thread */
#endif
    }
  }
}
#endif

/* Asynchronous calls: each thread keeps p[1] (at most 8) 512-byte pwrites in flight
 * for p[2] rounds, into its region with the pattern bytes, then reads them all back
 * the same way and checks them.
 * params: [0] endpoint, [1] in flight per thread, [2] rounds; out: [3] failures,
 * [4] first failure, [5] bytes read back intact, [6] gpuio_test calls that found a
 * request still in flight. */
#define GPUIO_CONF_ASYNC 512
#if GPUIO_CONF_IN(3)
GPUIO_KERNEL(gpuio_k_async_pattern)(const gpuio_channel *ch, gpuio_u64 *p) {
  const gpuio_u64 t = gpuio_global_thread_id();
  const gpuio_u32 n = p[1] < 8 ? (gpuio_u32)p[1] : 8u;
  gpuio_ticket tk[8];
  char buf[8][GPUIO_CONF_ASYNC];
  gpuio_u64 ok = 0, pending = 0;
  for (int pass = 0; pass < 2; pass++) {
    for (gpuio_u64 round = 0; round < p[2]; round++) {
      for (gpuio_u32 k = 0; k < n; k++) {
        const gpuio_u64 off = t * GPUIO_CONF_REGION + (round * n + k) * GPUIO_CONF_ASYNC;
        gpuio_i64 r;
        if (pass == 0) {
          for (int i = 0; i < GPUIO_CONF_ASYNC; i++) buf[k][i] = (char)gpuio_conf_byte(off + i);
          r = gpuio_pwrite_async(ch, (gpuio_u32)p[0], buf[k], GPUIO_CONF_ASYNC, (gpuio_i64)off, &tk[k]);
        } else {
          r = gpuio_pread_async(ch, (gpuio_u32)p[0], buf[k], GPUIO_CONF_ASYNC, (gpuio_i64)off, &tk[k]);
        }
        if (r != 0) gpuio_conf_fail(&p[3], &p[4], r);
      }
      for (gpuio_u32 k = 0; k < n; k++) {
        if (tk[k].state != GPUIO_TICKET_IN_FLIGHT) continue;
        if (gpuio_test(ch, &tk[k]) == 0) pending++;
        const gpuio_i64 r = gpuio_wait(ch, &tk[k]);
        if (r != GPUIO_CONF_ASYNC) {
          gpuio_conf_fail(&p[3], &p[4], r < 0 ? r : -GPUIO_EPROTO);
          continue;
        }
        if (pass == 1) {
          const gpuio_u64 off = t * GPUIO_CONF_REGION + (round * n + k) * GPUIO_CONF_ASYNC;
          bool same = true;
          for (int i = 0; i < GPUIO_CONF_ASYNC; i++) same = same && buf[k][i] == (char)gpuio_conf_byte(off + i);
          if (same) ok += GPUIO_CONF_ASYNC;
          else gpuio_conf_fail(&p[3], &p[4], -GPUIO_EPROTO);
        }
      }
    }
  }
  gpuio_fetch_add_64(&p[5], ok);
  gpuio_fetch_add_64(&p[6], pending);
}
#endif

/* One thread keeps p[1] (at most GPUIO_CONF_MANY) asynchronous calls in flight at
 * once, more than one ring of a forward channel has slots: p[1] writes of
 * GPUIO_CONF_MANY_BYTES into its region, all started before the first is waited
 * for, then as many reads of them back.
 * params: [0] endpoint, [1] tickets; out: [2] failures, [3] first failure, [4] bytes
 * read back intact. */
#define GPUIO_CONF_MANY 192
#define GPUIO_CONF_MANY_BYTES 16
#if GPUIO_CONF_IN(2)
GPUIO_KERNEL(gpuio_k_async_many)(const gpuio_channel *ch, gpuio_u64 *p) {
  const gpuio_u64 t = gpuio_global_thread_id();
  const gpuio_u32 n = p[1] < GPUIO_CONF_MANY ? (gpuio_u32)p[1] : GPUIO_CONF_MANY;
  gpuio_ticket tk[GPUIO_CONF_MANY];
  char buf[GPUIO_CONF_MANY][GPUIO_CONF_MANY_BYTES];
  gpuio_u64 ok = 0;
  for (int pass = 0; pass < 2; pass++) {
    for (gpuio_u32 k = 0; k < n; k++) {
      const gpuio_u64 off = t * GPUIO_CONF_REGION + k * GPUIO_CONF_MANY_BYTES;
      for (int i = 0; i < GPUIO_CONF_MANY_BYTES; i++) buf[k][i] = pass == 0 ? (char)gpuio_conf_byte(off + i) : 0;
      const gpuio_i64 r =
          pass == 0 ? gpuio_pwrite_async(ch, (gpuio_u32)p[0], buf[k], GPUIO_CONF_MANY_BYTES, (gpuio_i64)off, &tk[k])
                    : gpuio_pread_async(ch, (gpuio_u32)p[0], buf[k], GPUIO_CONF_MANY_BYTES, (gpuio_i64)off, &tk[k]);
      if (r != 0) gpuio_conf_fail(&p[2], &p[3], r);
    }
    for (gpuio_u32 k = 0; k < n; k++) {
      if (tk[k].state != GPUIO_TICKET_IN_FLIGHT) continue;
      const gpuio_i64 r = gpuio_wait(ch, &tk[k]);
      if (r != GPUIO_CONF_MANY_BYTES) {
        gpuio_conf_fail(&p[2], &p[3], r < 0 ? r : -GPUIO_EPROTO);
        continue;
      }
      if (pass == 0) continue;
      const gpuio_u64 off = t * GPUIO_CONF_REGION + k * GPUIO_CONF_MANY_BYTES;
      bool same = true;
      for (int i = 0; i < GPUIO_CONF_MANY_BYTES; i++) same = same && buf[k][i] == (char)gpuio_conf_byte(off + i);
      if (same) ok += GPUIO_CONF_MANY_BYTES;
      else gpuio_conf_fail(&p[2], &p[3], -GPUIO_EPROTO);
    }
  }
  gpuio_fetch_add_64(&p[4], ok);
}
#endif

/* Warp-cooperative calls: each warp (named by the global id of its first active
 * lane: unit u; on the CPU device every thread is a warp) writes p[3] pattern chunks
 * into its region with gpuio_pwrite_warp, reads each back with gpuio_pread_warp and
 * checks it.
 * params: [0] endpoint, [1] source (device pointer, byte o = the file's byte o),
 * [2] destination (device pointer, laid out like the file), [3] writes per unit;
 * out: [4] failures, [5] first failure, [6] bytes read back intact, [8 + u] 1 for
 * every unit u < 64 that ran. */
#if GPUIO_CONF_IN(4)
GPUIO_KERNEL(gpuio_k_warp_pattern)(const gpuio_channel *ch, gpuio_u64 *p) {
  const gpuio_u64 mask = gpuio_warp_active();
  const gpuio_u32 rank = gpuio_warp_rank(mask), count = gpuio_warp_count(mask);
  const gpuio_u64 unit = gpuio_warp_broadcast_64(mask, gpuio_global_thread_id(), gpuio_warp_leader(mask));
  const char *src = (const char *)p[1];
  char *dst = (char *)p[2];
  gpuio_u64 off = unit * GPUIO_CONF_REGION, bytes = 0;
  for (gpuio_u64 i = 0; i < p[3]; i++) {
    const gpuio_u32 n = gpuio_conf_size(unit, i);
    gpuio_i64 r = gpuio_pwrite_warp(ch, (gpuio_u32)p[0], src + off, n, (gpuio_i64)off);
    if (r == (gpuio_i64)n) r = gpuio_pread_warp(ch, (gpuio_u32)p[0], dst + off, n, (gpuio_i64)off);
    if (r == (gpuio_i64)n) {
      gpuio_u32 same = 1;
      for (gpuio_u64 j = rank; j < n; j += count) same &= dst[off + j] == src[off + j] ? 1u : 0u;
      if (gpuio_warp_min_32(mask, same)) bytes += n;
      else r = -GPUIO_EPROTO;
    }
    if (r != (gpuio_i64)n && rank == 0) gpuio_conf_fail(&p[4], &p[5], r < 0 ? r : -GPUIO_EPROTO);
    off += n;
  }
  if (rank == 0) {
    gpuio_fetch_add_64(&p[6], bytes);
    if (unit < 64) gpuio_st_relaxed_64(&p[8 + unit], 1);
  }
}
#endif

/* Small operations from every thread (gpuio_bench): p[3] calls of p[1] bytes (at
 * most 4096) each, pwrites (p[2] = 0) or preads (1), at offset t * p[1] of endpoint
 * p[0]; out: [4] failures, [5] first failure. */
#if GPUIO_CONF_IN(3)
GPUIO_KERNEL(gpuio_k_small_ops)(const gpuio_channel *ch, gpuio_u64 *p) {
  const gpuio_u64 t = gpuio_global_thread_id();
  const gpuio_u64 n = p[1] < 4096 ? p[1] : 4096;
  char buf[4096];
  for (gpuio_u64 i = 0; i < n; i++) buf[i] = (char)('a' + t % 26);
  for (gpuio_u64 i = 0; i < p[3]; i++) {
    const gpuio_i64 r = p[2] ? gpuio_pread(ch, (gpuio_u32)p[0], buf, n, (gpuio_i64)(t * n))
                             : gpuio_pwrite(ch, (gpuio_u32)p[0], buf, n, (gpuio_i64)(t * n));
    if (r != (gpuio_i64)n) gpuio_conf_fail(&p[4], &p[5], r);
  }
}
#endif

/* Bulk transfers from every warp (gpuio_bench; on the CPU device every thread is a
 * warp). A warp is unit u of U (U = threads / lanes per warp, written to p[9]); the
 * units are split into p[1] groups of consecutive units (so of consecutive blocks,
 * that is of SMs): unit u is in group g = u * p[1] / U, which starts at unit
 * first(g) = ceil(g * U / p[1]) and uses endpoint p[0] + g. Each unit moves p[4]
 * chunks of p[3] bytes with gpuio_pwrite_warp (p[2] = 0) or gpuio_pread_warp (1),
 * or, leaving out the copy between device memory and staging, with one lane's
 * gpuio_pwrite_staged (2) or gpuio_pread_staged (3) from / into the user staging
 * area: chunk i of the unit of rank r = u - first(g) is at offset (r * p[4] + i) *
 * p[3]. The bytes come from (go to) chunk u % p[6] of the device buffer p[5] (p[6]
 * chunks), or chunk u % (its chunks) of the user staging area (none: every chunk
 * fails with -EMSGSIZE); reads into a chunk several units share overwrite each
 * other, and are counted, not checked. A unit starts no chunk once p[7] ns have
 * passed since the first unit began (p[7] = 0: no limit).
 * out: [8] bytes moved, [9] U, [10] failures, [11] first failure, [12] the first
 * unit's start (gpuio_now_ns), [13] chunks not started for the time limit.
 * p[2] = 4 (5) makes no request: each chunk is the device's copy alone, from (into)
 * the staging chunk of slot u % slots into (from) the device buffer, with the
 * warp's copy a pread's (pwrite's) bytes take, so that the bench holds the passes
 * against what the copy alone reaches (a chunk longer than a slot fails with
 * -EMSGSIZE). Nothing else touches the slots then: no request is in flight. */
#if GPUIO_CONF_IN(4)
GPUIO_KERNEL(gpuio_k_bulk)(const gpuio_channel *ch, gpuio_u64 *p) {
  const gpuio_u64 mask = gpuio_warp_active();
  const gpuio_u32 rank = gpuio_warp_rank(mask), lanes = gpuio_warp_count(mask);
  const gpuio_u64 units = gpuio_thread_count() / lanes, u = gpuio_global_thread_id() / lanes;
  const gpuio_u64 groups = p[1] ? p[1] : 1, chunk = p[3], per = p[4];
  if (u == 0 && rank == 0) gpuio_st_relaxed_64(&p[9], units);
  if (per == 0 || chunk == 0 || u >= units) return;
  if (rank == 0) gpuio_cas_64(&p[12], 0, gpuio_now_ns());
  const gpuio_u64 start = gpuio_warp_broadcast_64(mask, gpuio_ld_relaxed_64(&p[12]), gpuio_warp_leader(mask));
  const gpuio_u64 g = u * groups / units, first = (g * units + groups - 1) / groups;
  const gpuio_u32 ep = (gpuio_u32)(p[0] + g);
  char *buf = (char *)p[5] + (u % (p[6] ? p[6] : 1)) * chunk;
  const gpuio_u64 op = p[2];
  gpuio_u64 user_off = 0, user_len = 0;
  gpuio_user_staging(ch, &user_off, &user_len);
  const gpuio_u64 user_chunks = user_len / chunk;
  const gpuio_u64 staged_off = user_chunks ? user_off + (u % user_chunks) * chunk : 0;
  gpuio_u64 bytes = 0;
  for (gpuio_u64 i = 0; i < per; i++) {
    if (p[7] && gpuio_now_ns() - start > p[7]) {
      if (rank == 0) gpuio_fetch_add_64(&p[13], per - i);
      break;
    }
    const gpuio_i64 off = (gpuio_i64)(((u - first) * per + i) * chunk);
    gpuio_i64 r = -GPUIO_EMSGSIZE;
    if (op == 0) r = gpuio_pwrite_warp(ch, ep, buf, chunk, off);
    else if (op == 1) r = gpuio_pread_warp(ch, ep, buf, chunk, off);
    else if (op >= 4) {
      if (chunk <= ch->slot_size) {
        char *slot = gpuio_ptr<char>(ch->staging) + (u % ch->slots) * (gpuio_u64)ch->slot_size;
        if (op == 4) gpuio_impl_copy_warp(buf, slot, chunk, rank, lanes);
        else gpuio_impl_copy_warp(slot, buf, chunk, rank, lanes);
        gpuio_warp_sync(mask);
        r = (gpuio_i64)chunk;
      }
    }
    else if (rank == 0 && user_chunks)
      r = op == 2 ? gpuio_pwrite_staged(ch, ep, staged_off, chunk, off) : gpuio_pread_staged(ch, ep, staged_off, chunk, off);
    if (op >= 2) r = (gpuio_i64)gpuio_warp_broadcast_64(mask, (gpuio_u64)r, gpuio_warp_leader(mask));
    if (r == (gpuio_i64)chunk) bytes += chunk;
    else if (rank == 0) gpuio_conf_fail(&p[10], &p[11], r < 0 ? r : -GPUIO_EPROTO);
  }
  if (rank == 0) gpuio_fetch_add_64(&p[8], bytes);
}
#endif

/* Forward's rings for a long pwrite (gpuio_forward_route). Unit u (a warp; on the
 * CPU device a thread) of U writes chunk u of the device buffer p[4] (p[3] bytes
 * each) to endpoint p[0] + u % p[1] at offset (u / p[1]) * p[3] with
 * gpuio_pwrite_warp. Before that its leader alone takes a slot as any request does
 * (route 0) and one as that pwrite does, and frees both unpublished; for u < p[2]
 * it records its warp's id, and each slot's index + 1, in p[16 + 3u ..]. Then every
 * lane takes a slot at once, three times, and frees it unpublished: (0) every lane
 * asking for the route of u's pwrite, (1) the lane of rank r for that of endpoint
 * p[0] + (u + r) % p[1], (2) odd ranks for u's route, even ones for none; for
 * u < p[10] the lane of rank r records each slot's index + 1 in
 * p[16 + 3 * p[2] + 3 * (u * lanes + r) + k]. out: [5] failures, [6]
 * first failure, [7] U, [8] the descriptor's rings, [9] its write_group. Forward
 * only: elsewhere every unit fails with -EPROTO. */
#if GPUIO_CONF_IN(2)
GPUIO_KERNEL(gpuio_k_route_rings)(const gpuio_channel *ch, gpuio_u64 *p) {
  const gpuio_u64 mask = gpuio_warp_active();
  const gpuio_u32 rank = gpuio_warp_rank(mask), lanes = gpuio_warp_count(mask);
  const gpuio_u64 units = gpuio_thread_count() / lanes, u = gpuio_global_thread_id() / lanes;
  const gpuio_u64 chunk = p[3];
  const gpuio_u32 ep = (gpuio_u32)(p[0] + u % p[1]);
  if (u == 0 && rank == 0) {
    gpuio_st_relaxed_64(&p[7], units);
    gpuio_st_relaxed_64(&p[8], ch->forward.rings);
    gpuio_st_relaxed_64(&p[9], ch->forward.write_group);
  }
  if (rank == 0 && ch->transport != GPUIO_TRANSPORT_FORWARD) gpuio_conf_fail(&p[5], &p[6], -GPUIO_EPROTO);
  if (rank == 0 && ch->transport == GPUIO_TRANSPORT_FORWARD) {
    const gpuio_u32 routes[2] = {0u, gpuio_impl_route(GPUIO_OP_PWRITE, ep, chunk)};
    if (u < p[2]) gpuio_st_relaxed_64(&p[16 + 3 * u], gpuio_warp_id());
    for (gpuio_u32 k = 0; k < 2; k++) {
      gpuio_slot s;
      const int e = gpuio_forward_acquire(ch, &s, gpuio_impl_deadline(ch), routes[k]);
      if (e) {
        gpuio_conf_fail(&p[5], &p[6], e);
        continue;
      }
      if (u < p[2]) gpuio_st_relaxed_64(&p[17 + 3 * u + k], (gpuio_u64)s.index + 1u);
      gpuio_impl_release(ch, &s);
    }
  }
  gpuio_warp_sync(mask);
  if (ch->transport == GPUIO_TRANSPORT_FORWARD) {
    const gpuio_u32 own = gpuio_impl_route(GPUIO_OP_PWRITE, ep, chunk);
    const gpuio_u32 routes[3] = {own, gpuio_impl_route(GPUIO_OP_PWRITE, (gpuio_u32)(p[0] + (u + rank) % p[1]), chunk),
                                 rank % 2u ? own : 0u};
    gpuio_u64 *lanes_at = &p[16 + 3 * p[2] + 3 * (u * lanes + rank)];
    for (gpuio_u32 k = 0; k < 3; k++) {
      gpuio_warp_sync(mask);
      gpuio_slot s;
      const int e = gpuio_forward_acquire(ch, &s, gpuio_impl_deadline(ch), routes[k]);
      if (e) {
        gpuio_conf_fail(&p[5], &p[6], e);
        continue;
      }
      if (u < p[10]) gpuio_st_relaxed_64(&lanes_at[k], (gpuio_u64)s.index + 1u);
      gpuio_impl_release(ch, &s);
    }
  }
  gpuio_warp_sync(mask);
  const gpuio_i64 r = gpuio_pwrite_warp(ch, ep, (const char *)p[4] + u * chunk, chunk, (gpuio_i64)(u / p[1] * chunk));
  if (r != (gpuio_i64)chunk && rank == 0) gpuio_conf_fail(&p[5], &p[6], r < 0 ? r : -GPUIO_EPROTO);
}
#endif

/* The device's own printf (CUDA's; the C library's on the CPU device), the same
 * lines as gpuio_k_printf_lines: gpuio_bench's reference for gpuio_printf. On AMD
 * the device printf comes with the HIP runtime's header, which gpuio.h does without:
 * there every call fails with -ENOSYS.
 * params: [0] lines per thread; out: [1] failures (printf < 0), [2] first failure. */
#if GPUIO_CONF_IN(4)
GPUIO_KERNEL(gpuio_k_native_printf)(const gpuio_channel *ch, gpuio_u64 *p) {
  (void)ch;
  int t = (int)gpuio_global_thread_id();
  for (int i = 0; i < (int)p[0]; i++) {
#if defined(GPUIO_TARGET_HIP)
    (void)t;
    const int r = -GPUIO_ENOSYS;
#else
    int r = printf("t=%d i=%d x=%#x s=%-6s f=%.3f e=%e %c%%\n", t, i, t * 1000 + i, "ok", i * 0.25, (double)t * 1e10,
                   'A' + (i % 26));
#endif
    if (r < 0) gpuio_conf_fail(&p[1], &p[2], r);
  }
}
#endif

/* The whole device at once: every thread writes its 48-byte row at t * 48, reads
 * it back, checks it and prints it.
 * params: [0] file endpoint; out: [1] failures, [2] first failure, [3] rows that
 * made the whole round trip. */
#define GPUIO_CONF_ROW 48
#if GPUIO_CONF_IN(0)
GPUIO_KERNEL(gpuio_k_full_device)(const gpuio_channel *ch, gpuio_u64 *p) {
  gpuio_u64 t = gpuio_global_thread_id();
  char row[GPUIO_CONF_ROW + 1], back[GPUIO_CONF_ROW];
  int n = gpuio_snprintf(row, sizeof row, "t=%010llu n=%010llu gpuio full-device row\n", t, gpuio_thread_count());
  if (n != GPUIO_CONF_ROW) {
    gpuio_conf_fail(&p[1], &p[2], -GPUIO_EINVAL);
    return;
  }
  gpuio_i64 r = gpuio_pwrite(ch, (gpuio_u32)p[0], row, GPUIO_CONF_ROW, (gpuio_i64)(t * GPUIO_CONF_ROW));
  if (r != GPUIO_CONF_ROW) {
    gpuio_conf_fail(&p[1], &p[2], r < 0 ? r : -GPUIO_EPROTO);
    return;
  }
  r = gpuio_pread(ch, (gpuio_u32)p[0], back, GPUIO_CONF_ROW, (gpuio_i64)(t * GPUIO_CONF_ROW));
  bool same = r == GPUIO_CONF_ROW;
  for (int i = 0; same && i < GPUIO_CONF_ROW; i++) same = back[i] == row[i];
  if (!same) {
    gpuio_conf_fail(&p[1], &p[2], r < 0 ? r : -GPUIO_EPROTO);
    return;
  }
  r = gpuio_printf(ch, "%s", row);
  if (r != GPUIO_CONF_ROW) {
    gpuio_conf_fail(&p[1], &p[2], r < 0 ? r : -GPUIO_EPROTO);
    return;
  }
  gpuio_fetch_add_64(&p[3], 1);
}
#endif

/* Every public call with a null channel: each must return -EINVAL without reading
 * through it (gpuio_user_staging: NULL and 0 bytes). The null comes from params so
 * no compiler can fold it. params: [0] the channel to use (the host passes 0), or 1
 * for a byte-for-byte copy of this kernel's descriptor 8 bytes past a 64-byte
 * boundary: a descriptor in every word but its alignment, which every call must
 * refuse as it refuses null (without the rule the copy would work);
 * out: [1..11) one result per call (see gpuio_device::kernels::NULL_CHANNEL_CALLS),
 * [11] gpuio_user_staging's pointer, [12] its offset, [13] its length. */
#if GPUIO_CONF_IN(5)
GPUIO_KERNEL(gpuio_k_null_channel)(const gpuio_channel *ch, gpuio_u64 *p) {
  if (gpuio_global_thread_id() != 0) return;
  alignas(64) char copy[sizeof(gpuio_channel) + 64];
  const gpuio_channel *none = (const gpuio_channel *)p[0];
  if (p[0] == 1u) {
    for (gpuio_u32 i = 0; i < sizeof(gpuio_channel); i++) copy[8 + i] = ((const char *)ch)[i];
    none = (const gpuio_channel *)(copy + 8);
  }
  gpuio_i64 *out = (gpuio_i64 *)&p[1];
  char x[16];
  for (int i = 0; i < 16; i++) x[i] = 'N';
  out[0] = gpuio_nop(none);
  out[1] = gpuio_pwrite(none, 0, x, 16, 0);
  out[2] = gpuio_pread(none, 0, x, 16, 0);
  out[3] = gpuio_write(none, 0, x, 16);
  out[4] = gpuio_read(none, 0, x, 16);
  out[5] = gpuio_pwrite_staged(none, 0, 0, 16, 0);
  out[6] = gpuio_pread_staged(none, 0, 0, 16, 0);
  out[7] = gpuio_printf(none, "null %d\n", 1);
  out[8] = gpuio_fprintf(none, 0, "null %d\n", 2);
  out[9] = gpuio_printf(none, "no arguments\n");
  gpuio_u64 off = 77, len = 77;
  char *user = gpuio_user_staging(none, &off, &len);
  p[11] = (gpuio_u64)user;
  p[12] = off;
  p[13] = len;
}
#endif

/* printf at its limits, from one thread, in this order. params: [0] a NUL-terminated
 * string of slot_size + 100 'x' (device pointer); out: [1] "%s\n" of it (cut:
 * -EMSGSIZE), [2] "next\n", [3] "%s" of it (cut, no newline to keep: -EMSGSIZE),
 * [4] "|end\n", [5] a line over INT_MAX bytes (-EOVERFLOW, nothing written),
 * [6] "after\n", [7] "" (0), [8] "%s\n" of its last slot_size - 2 bytes (exactly
 * one slot: slot_size - 1). */
#if GPUIO_CONF_IN(7)
GPUIO_KERNEL(gpuio_k_printf_limits)(const gpuio_channel *ch, gpuio_u64 *p) {
  if (gpuio_global_thread_id() != 0) return;
  const char *x = (const char *)p[0];
  gpuio_i64 *out = (gpuio_i64 *)&p[1];
  out[0] = gpuio_printf(ch, "%s\n", x);
  out[1] = gpuio_printf(ch, "next\n");
  out[2] = gpuio_printf(ch, "%s", x);
  out[3] = gpuio_printf(ch, "|end\n");
  out[4] = gpuio_printf(ch, "%*d%*d\n", 2147483647, 1, 2147483647, 2);
  out[5] = gpuio_printf(ch, "after\n");
  out[6] = gpuio_printf(ch, "");
  out[7] = gpuio_printf(ch, "%s\n", x + 102);
}
#endif

/* Reads from a stream nobody writes to, every one bound to time out. params:
 * [0] endpoint, [1] reads per thread; out: [2] calls that returned -ETIMEDOUT,
 * [3] calls that returned anything else, [4] the first such result. */
#if GPUIO_CONF_IN(1)
GPUIO_KERNEL(gpuio_k_read_timeouts)(const gpuio_channel *ch, gpuio_u64 *p) {
  char buf[64];
  for (gpuio_u64 i = 0; i < p[1]; i++) {
    gpuio_i64 r = gpuio_read(ch, (gpuio_u32)p[0], buf, sizeof buf);
    if (r == -GPUIO_ETIMEDOUT) gpuio_fetch_add_64(&p[2], 1);
    else gpuio_conf_fail(&p[3], &p[4], r);
  }
}
#endif

/* One read that never completes beside busy writers. Thread 0 reads endpoint p[1]
 * (a pipe nobody writes); every other thread writes 20 eight-byte rows to endpoint
 * p[0] at its own offsets. out: [2] what the read returned, [3] writes that went
 * through. */
#if GPUIO_CONF_IN(4)
GPUIO_KERNEL(gpuio_k_stuck_and_busy)(const gpuio_channel *ch, gpuio_u64 *p) {
  const gpuio_u64 t = gpuio_global_thread_id();
  if (t == 0) {
    char buf[16];
    p[2] = (gpuio_u64)gpuio_read(ch, (gpuio_u32)p[1], buf, sizeof buf);
    return;
  }
  for (gpuio_u64 i = 0; i < 20; i++) {
    char row[8] = {'r', 'o', 'w', (char)('a' + t % 26), (char)('a' + i), ' ', ' ', '\n'};
    if (gpuio_pwrite(ch, (gpuio_u32)p[0], row, 8, (gpuio_i64)((t * 20 + i) * 8)) == 8) gpuio_fetch_add_64(&p[3], 1);
  }
}
#endif

/* Raw requests (and, on direct, raw SQEs) beyond what the host declared for an
 * endpoint whose file was opened read-write: each must fail with -EBADF, on
 * direct from io_uring itself. Then the declared access still works.
 * params: [0] endpoint declared read-only, [1] one declared write-only, [2] one
 * declared write-only on an O_APPEND file; out: [3..13) one result per case (see
 * gpuio_device::kernels::BEYOND_ACCESS_CASES), [13] the 4 bytes case 7 read. */
#if GPUIO_CONF_IN(6)
GPUIO_KERNEL(gpuio_k_beyond_access)(const gpuio_channel *ch, gpuio_u64 *p) {
  if (gpuio_global_thread_id() != 0) return;
  gpuio_u32 ro = (gpuio_u32)p[0], wo = (gpuio_u32)p[1], ap = (gpuio_u32)p[2];
  gpuio_i64 *out = (gpuio_i64 *)&p[3];
  gpuio_u64 off = 0, room = 0;
  char *user = gpuio_user_staging(ch, &off, &room);
  for (int i = 0; i < 64 && (gpuio_u64)i < room; i++) user[i] = 'X';
  gpuio_request w = {GPUIO_OP_PWRITE, ro, 64, 0, off, 0};
  out[0] = gpuio_impl_request_raw(ch, &w); /* pwrite on a read-only endpoint */
  gpuio_request ws = {GPUIO_OP_WRITE, ro, 64, 0, off, -1};
  out[1] = gpuio_impl_request_raw(ch, &ws); /* write on a read-only endpoint */
  gpuio_request r = {GPUIO_OP_PREAD, wo, 64, 0, off, 0};
  out[2] = gpuio_impl_request_raw(ch, &r); /* pread on a write-only endpoint */
  gpuio_request rs = {GPUIO_OP_READ, wo, 64, 0, off, -1};
  out[3] = gpuio_impl_request_raw(ch, &rs); /* read on a write-only endpoint */
  gpuio_request ra = {GPUIO_OP_READ, ap, 64, 0, off, -1};
  out[4] = gpuio_impl_request_raw(ch, &ra); /* read on a write-only O_APPEND endpoint */
  out[5] = 1;
  out[6] = 1;
#ifdef GPUIO_DIRECT_RAW_SQE
  if (ch->transport == GPUIO_TRANSPORT_DIRECT) {
    gpuio_sqe sqe = {};
    sqe.opcode = GPUIO_IORING_OP_WRITE_FIXED;
    sqe.flags = GPUIO_IOSQE_FIXED_FILE;
    sqe.fd = (gpuio_i32)ro;
    sqe.addr = ch->direct.fixed_buffer_host + off;
    sqe.len = 64;
    sqe.off = 0;
    sqe.buf_index = 0;
    out[5] = gpuio_direct_raw_sqe(ch, &sqe); /* WRITE_FIXED on the read-only file */
    sqe.opcode = GPUIO_IORING_OP_READ_FIXED;
    sqe.fd = (gpuio_i32)wo;
    out[6] = gpuio_direct_raw_sqe(ch, &sqe); /* READ_FIXED on the write-only file */
  }
#endif
  char got[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  out[7] = gpuio_pread(ch, ro, got, 4, 0);
  gpuio_u64 word = 0;
  for (int i = 0; i < 8; i++) word |= (gpuio_u64)(gpuio_u8)got[i] << (8 * i);
  p[13] = word;
  out[8] = gpuio_pwrite(ch, wo, "wrote", 5, 0);
  out[9] = gpuio_write(ch, ap, "tail\n", 5);
}
#endif

/* ------------------------------------------------------------ host queues
 * (gpuio bench). A message of p bytes from thread t, number i: its first 8 bytes
 * are t << 24 | i, the rest a byte of t. */
GPUIO_FN void gpuio_conf_message(char *m, gpuio_u64 t, gpuio_u64 i, gpuio_u64 bytes) {
  const gpuio_u64 head = t << 24 | i;
  for (gpuio_u64 k = 0; k < 8 && k < bytes; k++) m[k] = (char)(head >> (8 * k));
  for (gpuio_u64 k = 8; k < bytes; k += 8) *(gpuio_u64 *)(m + k) = t * 0x0101010101010101ull;
}

/* Sends p[1] messages of p[2] bytes (a multiple of 8, at most 4096) per thread on
 * queue p[0]; out: [3] failures, [4] first failure. */
#if GPUIO_CONF_IN(4)
GPUIO_KERNEL(gpuio_k_queue_send)(const gpuio_channel *ch, gpuio_u64 *p) {
  const gpuio_u64 t = gpuio_global_thread_id();
  const gpuio_u64 bytes = p[2] < 4096 ? p[2] : 4096;
  alignas(8) char m[4096];
  for (gpuio_u64 i = 0; i < p[1]; i++) {
    gpuio_conf_message(m, t, i, bytes);
    const gpuio_i64 r = gpuio_send(ch, (gpuio_u32)p[0], m, bytes);
    if (r != (gpuio_i64)bytes) gpuio_conf_fail(&p[3], &p[4], r);
  }
}
#endif

/* The habit gpuio replaces: the same messages written into device memory p[0]
 * (message i of thread t at (t * p[1] + i) * p[2]), copied back after the kernel. */
#if GPUIO_CONF_IN(3)
GPUIO_KERNEL(gpuio_k_queue_fill)(const gpuio_channel *ch, gpuio_u64 *p) {
  (void)ch;
  const gpuio_u64 t = gpuio_global_thread_id();
  const gpuio_u64 bytes = p[2] < 4096 ? p[2] : 4096;
  char *out = gpuio_ptr<char>(p[0]);
  for (gpuio_u64 i = 0; i < p[1]; i++) gpuio_conf_message(out + (t * p[1] + i) * bytes, t, i, bytes);
}
#endif

/* The naive mapped ring, the other reference for the to-host queue figures (gpuio
 * bench): one ring in shared memory for the whole device, one slot and one ready word
 * per message. For each of its p[2] messages a thread takes a position with one
 * fetch-add on a counter in device memory, waits until the host has freed that slot
 * (polling the host's head in shared memory, each waiting thread for itself), writes
 * the message (gpuio_conf_message, the same bytes gpuio_k_queue_send sends) into slot
 * pos % slots and publishes it: ready word = pos + 1 (release). The host takes the
 * messages in order and stores its head (messages taken) every so often.
 * params: [0] the ring (shared memory, zeroed): u64 head at +0 (host), u64 gave-up
 * flag at +64 (set by a thread that stopped waiting), the slots' ready words (u64) at
 * +128, the slots (p[3] bytes each) at GPUIO_CONF_NAIVE_DATA(slots); [1] slots;
 * [2] messages per thread; [3] bytes (a multiple of 8, at most 4096); [4] the counter
 * (device memory, a zeroed u64); [5] the longest a thread waits for its slot, ns;
 * out: [6] threads that stopped waiting (timed out; their messages never come). */
#define GPUIO_CONF_NAIVE_DATA(slots) (((gpuio_u64)(slots) * 8 + 128 + 63) / 64 * 64)
#if GPUIO_CONF_IN(4)
GPUIO_KERNEL(gpuio_k_queue_naive)(const gpuio_channel *ch, gpuio_u64 *p) {
  (void)ch;
  const gpuio_u64 t = gpuio_global_thread_id();
  const gpuio_u64 slots = p[1], bytes = p[3] < 4096 ? p[3] : 4096;
  char *ring = gpuio_ptr<char>(p[0]);
  gpuio_u64 *head = (gpuio_u64 *)ring, *gave_up = (gpuio_u64 *)(ring + 64), *ready = (gpuio_u64 *)(ring + 128);
  char *data = ring + GPUIO_CONF_NAIVE_DATA(slots);
  gpuio_u64 *counter = gpuio_ptr<gpuio_u64>(p[4]);
  if (slots == 0) return;
  for (gpuio_u64 i = 0; i < p[2]; i++) {
    const gpuio_u64 pos = gpuio_fetch_add_64(counter, 1);
    const gpuio_u64 deadline = gpuio_now_ns() + p[5];
    while (pos >= gpuio_ld_acquire_64(head) + slots) {
      if (gpuio_now_ns() > deadline) {
        gpuio_fetch_add_64(&p[6], 1);
        gpuio_st_release_64(gave_up, 1);
        return;
      }
      gpuio_pause();
    }
    gpuio_conf_message(data + (pos % slots) * bytes, t, i, bytes);
    gpuio_st_release_64(&ready[pos % slots], pos + 1);
  }
}
#endif

/* Receives from queue p[0] until the end of the stream; out: [1] messages,
 * [2] bytes, [3] failures, [4] first failure, [5] calls, [6] the lanes of each call's
 * warp that called with it, summed (over [5]: how many lanes call together). */
#if GPUIO_CONF_IN(1)
GPUIO_KERNEL(gpuio_k_queue_recv)(const gpuio_channel *ch, gpuio_u64 *p) {
  alignas(8) char m[4096];
  gpuio_u64 n = 0, bytes = 0, calls = 0, together = 0;
  for (;;) {
    calls++;
    together += gpuio_warp_count(gpuio_warp_active());
    const gpuio_i64 r = gpuio_recv(ch, (gpuio_u32)p[0], m, sizeof m);
    if (r == 0) break;
    if (r < 0) {
      gpuio_conf_fail(&p[3], &p[4], r);
      break;
    }
    n++;
    bytes += (gpuio_u64)r;
  }
  if (n) {
    gpuio_fetch_add_64(&p[1], n);
    gpuio_fetch_add_64(&p[2], bytes);
  }
  gpuio_fetch_add_64(&p[5], calls);
  gpuio_fetch_add_64(&p[6], together);
}
#endif

/* One message on an idle queue, timed by the host (gpuio bench): thread 0, for i in
 * 1..=p[2], waits until the host's word at p[1] (shared memory) holds i, then sends
 * the 8 bytes of i on queue p[0]. Every wait is bounded (1 s); out: [3] failures,
 * [4] first failure (-ETIMEDOUT when the host's word never came). */
#if GPUIO_CONF_IN(2)
GPUIO_KERNEL(gpuio_k_queue_wake_send)(const gpuio_channel *ch, gpuio_u64 *p) {
  if (gpuio_global_thread_id() != 0) return;
  const gpuio_u64 *wake = gpuio_ptr<const gpuio_u64>(p[1]);
  for (gpuio_u64 i = 1; i <= p[2]; i++) {
    const gpuio_u64 deadline = gpuio_now_ns() + 1000000000ull;
    while (gpuio_ld_acquire_64(wake) < i) {
      if (gpuio_now_ns() > deadline) {
        gpuio_conf_fail(&p[3], &p[4], -GPUIO_ETIMEDOUT);
        return;
      }
      gpuio_pause();
    }
    const gpuio_i64 r = gpuio_send(ch, (gpuio_u32)p[0], &i, sizeof i);
    if (r != (gpuio_i64)sizeof i) {
      gpuio_conf_fail(&p[3], &p[4], r);
      return;
    }
  }
}
#endif

/* Thread 0 echoes every message from queue p[0] to queue p[1] until the end of the
 * stream; out: [2] failures, [3] first failure. */
#if GPUIO_CONF_IN(2)
GPUIO_KERNEL(gpuio_k_queue_echo)(const gpuio_channel *ch, gpuio_u64 *p) {
  if (gpuio_global_thread_id() != 0) return;
  alignas(8) char m[256];
  for (;;) {
    gpuio_i64 r = gpuio_recv(ch, (gpuio_u32)p[0], m, sizeof m);
    if (r == 0) break;
    if (r > 0) r = gpuio_send(ch, (gpuio_u32)p[1], m, (gpuio_u64)r);
    if (r < 0) {
      gpuio_conf_fail(&p[2], &p[3], r);
      break;
    }
  }
}
#endif

/* ------------------------------------------------------------ host queues
 * (conformance). A message is named by a 64-bit key (thread << 32 | i to the host,
 * i to the device): its first 8 bytes are the key, little-endian; its length is
 * 8 .. max bytes, from the key; byte k >= 8 follows from the key and k. The host
 * makes and checks the same messages (gpuio_device::kernels::queue_message). */
#define GPUIO_CONF_QMAX 256u

GPUIO_FN gpuio_u32 gpuio_conf_qlen(gpuio_u64 key, gpuio_u32 max) {
  gpuio_u64 h = key * 0x9E3779B97F4A7C15ull;
  h ^= h >> 31;
  return 8u + (gpuio_u32)(h % (gpuio_u64)(max - 7u));
}
GPUIO_FN gpuio_u8 gpuio_conf_qbyte(gpuio_u64 key, gpuio_u32 k) {
  return (gpuio_u8)(key * 131u + k * 7u + (key >> 29));
}
/* Writes message `key` into m (at least max bytes); returns its length. */
GPUIO_FN gpuio_u32 gpuio_conf_qmessage(char *m, gpuio_u64 key, gpuio_u32 max) {
  const gpuio_u32 len = gpuio_conf_qlen(key, max);
  for (gpuio_u32 k = 0; k < 8; k++) m[k] = (char)(key >> (8 * k));
  for (gpuio_u32 k = 8; k < len; k++) m[k] = (char)gpuio_conf_qbyte(key, k);
  return len;
}
/* Whether m (len bytes) is a whole message; its key in *key. */
GPUIO_FN bool gpuio_conf_qcheck(const char *m, gpuio_u32 len, gpuio_u32 max, gpuio_u64 *key) {
  if (len < 8) return false;
  gpuio_u64 v = 0;
  for (gpuio_u32 k = 0; k < 8; k++) v |= (gpuio_u64)(gpuio_u8)m[k] << (8 * k);
  *key = v;
  if (len != gpuio_conf_qlen(v, max)) return false;
  for (gpuio_u32 k = 8; k < len; k++)
    if ((gpuio_u8)m[k] != gpuio_conf_qbyte(v, k)) return false;
  return true;
}
GPUIO_FN gpuio_u32 gpuio_conf_qmax(gpuio_u64 max) { return max < GPUIO_CONF_QMAX ? (gpuio_u32)max : GPUIO_CONF_QMAX; }

/* Every thread sends p[1] messages (keys thread << 32 | i, i = 0, 1, ...) of up to
 * p[2] bytes on queue p[0], in order; out: [3] sent, [4] failures, [5] first failure. */
#if GPUIO_CONF_IN(3)
GPUIO_KERNEL(gpuio_k_queue_numbered)(const gpuio_channel *ch, gpuio_u64 *p) {
  const gpuio_u64 t = gpuio_global_thread_id();
  const gpuio_u32 max = gpuio_conf_qmax(p[2]);
  char m[GPUIO_CONF_QMAX];
  gpuio_u64 sent = 0;
  for (gpuio_u64 i = 0; i < p[1]; i++) {
    const gpuio_u32 len = gpuio_conf_qmessage(m, t << 32 | i, max);
    const gpuio_i64 r = gpuio_send(ch, (gpuio_u32)p[0], m, len);
    if (r == (gpuio_i64)len) sent++;
    else gpuio_conf_fail(&p[4], &p[5], r);
  }
  if (sent) gpuio_fetch_add_64(&p[3], sent);
}
#endif

/* Every thread receives from queue p[0] (messages of up to p[1] bytes) until the
 * end of the stream, checking each; out: [2] messages received whole, [3] sum of
 * their key + 1, [4] torn or foreign messages, [5] threads whose last gpuio_recv
 * returned 0, [6] failures, [7] first failure. */
#if GPUIO_CONF_IN(3)
GPUIO_KERNEL(gpuio_k_queue_take)(const gpuio_channel *ch, gpuio_u64 *p) {
  const gpuio_u32 max = gpuio_conf_qmax(p[1]);
  char m[GPUIO_CONF_QMAX];
  gpuio_u64 n = 0, sum = 0, bad = 0;
  for (;;) {
    const gpuio_i64 r = gpuio_recv(ch, (gpuio_u32)p[0], m, sizeof m);
    if (r == 0) {
      gpuio_fetch_add_64(&p[5], 1u);
      break;
    }
    if (r < 0) {
      gpuio_conf_fail(&p[6], &p[7], r);
      break;
    }
    gpuio_u64 key = 0;
    if (gpuio_conf_qcheck(m, (gpuio_u32)r, max, &key)) {
      n++;
      sum += key + 1u;
    } else {
      bad++;
    }
  }
  if (n) {
    gpuio_fetch_add_64(&p[2], n);
    gpuio_fetch_add_64(&p[3], sum);
  }
  if (bad) gpuio_fetch_add_64(&p[4], bad);
}
#endif

/* Misusing queues, one thread. p[0]: a queue to the host of 4 cells, messages of
 * up to 64 bytes, nobody reading; p[1]: a queue to the device the host left empty
 * and open; p[2]: a queue to the device holding one message (key 7, up to 128
 * bytes) that the host then closed. Answers (>= 0 or -errno) from p[4] on, in the
 * order of gpuio_device::kernels::QUEUE_MISUSE_CASES. */
#if GPUIO_CONF_IN(5)
GPUIO_KERNEL(gpuio_k_queue_misuse)(const gpuio_channel *ch, gpuio_u64 *p) {
  if (gpuio_global_thread_id() != 0) return;
  const gpuio_u32 to_host = (gpuio_u32)p[0], empty = (gpuio_u32)p[1], closed = (gpuio_u32)p[2];
  char big[65] = {0};
  char buf[GPUIO_CONF_QMAX];
  gpuio_u64 *out = p + 4;
  out[0] = (gpuio_u64)gpuio_recv(ch, to_host, buf, sizeof buf);
  out[1] = (gpuio_u64)gpuio_send(ch, empty, "x", 1);
  out[2] = (gpuio_u64)gpuio_send(ch, to_host, big, sizeof big);
  out[3] = (gpuio_u64)gpuio_send(ch, 1000u, "x", 1);
  out[4] = (gpuio_u64)gpuio_try_recv(ch, empty, buf, sizeof buf);
  gpuio_u64 fitted = 0;
  for (gpuio_u64 i = 0; i < 4; i++) {
    const gpuio_u32 len = gpuio_conf_qmessage(buf, i, 64);
    if (gpuio_try_send(ch, to_host, buf, len) == (gpuio_i64)len) fitted++;
  }
  out[5] = fitted;
  const gpuio_u32 len = gpuio_conf_qmessage(buf, 4, 64);
  out[6] = (gpuio_u64)gpuio_try_send(ch, to_host, buf, len);
  out[7] = (gpuio_u64)gpuio_try_recv(ch, closed, buf, 4);
  const gpuio_i64 got = gpuio_recv(ch, closed, buf, sizeof buf);
  gpuio_u64 key = 0;
  out[8] = (gpuio_u64)got;
  out[9] = got > 0 && gpuio_conf_qcheck(buf, (gpuio_u32)got, 128, &key) ? key : ~0ull;
  out[10] = (gpuio_u64)gpuio_recv(ch, closed, buf, sizeof buf);
  out[11] = (gpuio_u64)gpuio_try_recv(ch, closed, buf, sizeof buf);
}
#endif

/* The rulebook's table (src/conformance.rs): each request of a table the host
 * wrote, made raw (through the transport, past the public calls' checks) or
 * through the public call for its opcode (SEND / RECV: gpuio_send / gpuio_recv,
 * which pick the socket ops on a socket endpoint); every transport must answer each the
 * same. Before it starts, byte i of the kernel's own staging area is
 * 'a' + i % 26 (i < 64), for the table's good requests to write.
 * params: [0] device address of gpuio_request[n], [1] n, [2 + i] in: 0 raw,
 * 1 public call; out: row i's result. */
#if GPUIO_CONF_IN(7)
GPUIO_KERNEL(gpuio_k_rulebook)(const gpuio_channel *ch, gpuio_u64 *p) {
  if (gpuio_global_thread_id() != 0) return;
  gpuio_u64 off = 0, room = 0;
  char *user = gpuio_user_staging(ch, &off, &room);
  for (gpuio_u64 i = 0; i < 64 && i < room; i++) user[i] = (char)('a' + i % 26);
  const gpuio_request *table = (const gpuio_request *)p[0];
  char buf[64];
  for (gpuio_u64 i = 0; i < p[1]; i++) {
    const gpuio_request r = table[i];
    gpuio_i64 res;
    if (p[2 + i] == 0) {
      res = gpuio_impl_request_raw(ch, &r);
    } else if (r.flags != 0) {
      res = gpuio_impl_request_staged(ch, r); /* what the staged calls use: no call takes flags */
    } else if (r.op == GPUIO_OP_NOP) {
      res = gpuio_nop(ch);
    } else if (r.op == GPUIO_OP_PWRITE) {
      res = gpuio_pwrite_staged(ch, r.endpoint, r.staging_off, r.len, r.offset);
    } else if (r.op == GPUIO_OP_PREAD) {
      res = gpuio_pread_staged(ch, r.endpoint, r.staging_off, r.len, r.offset);
    } else if (r.op == GPUIO_OP_WRITE) {
      res = r.len <= sizeof buf ? gpuio_write(ch, r.endpoint, user, r.len) : -GPUIO_EMSGSIZE;
    } else if (r.op == GPUIO_OP_READ) {
      res = r.len <= sizeof buf ? gpuio_read(ch, r.endpoint, buf, r.len) : -GPUIO_EMSGSIZE;
    } else if (r.op == GPUIO_OP_SEND) {
      res = r.len <= sizeof buf ? gpuio_send(ch, r.endpoint, user, r.len) : -GPUIO_EMSGSIZE;
    } else if (r.op == GPUIO_OP_RECV) {
      res = r.len <= sizeof buf ? gpuio_recv(ch, r.endpoint, buf, r.len) : -GPUIO_EMSGSIZE;
    } else {
      res = gpuio_impl_request_staged(ch, r);
    }
    p[2 + i] = (gpuio_u64)res;
  }
}
#endif

/* ------------------------------------------------------------ hostile kernels
 * A kernel may scribble over its own channel; the host must notice, say so and
 * stay bounded, never report such a channel clean (gpuio selftest). */

/* Moves the direct ring's SQ tail a lap ahead of what gpuio's publisher released
 * (on direct only; elsewhere it only makes the first NOP). Thread 0: a NOP, the
 * tail moved, then it runs on for p[0] ns so that the host sees the violation while
 * it runs, and one more NOP (the host has stopped the ring by then: it answers
 * nothing but a failure). out: [1] the first NOP, [2] the last one. */
#if GPUIO_CONF_IN(2)
GPUIO_KERNEL(gpuio_k_hostile_sq_tail)(const gpuio_channel *ch, gpuio_u64 *p) {
  if (gpuio_global_thread_id() != 0) return;
  p[1] = (gpuio_u64)gpuio_nop(ch);
  if (ch->transport != GPUIO_TRANSPORT_DIRECT) return;
  gpuio_u32 *tail = gpuio_ptr<gpuio_u32>(ch->direct.sq_tail);
  gpuio_st_release_32(tail, gpuio_ld_acquire_32(tail) + ch->direct.sq_entries);
  const gpuio_u64 until = gpuio_now_ns() + p[0];
  while (gpuio_now_ns() < until) gpuio_sleep_ns(1000000u);
  p[2] = (gpuio_u64)gpuio_nop(ch);
}
#endif

/* Scribbles forward stamps (on forward only) beside an honest read. Launch two
 * threads in different blocks. Thread 1 reads 8 bytes from stream endpoint p[0]
 * (out: [1] what it returned); thread 0 waits (2 s at most) for that read's entry
 * to be READY (out: [2] its index, -1 if it never was) and 200 ms more for the
 * host to take it, then stamps it READY for
 * the entry's next lap while the read is unanswered, the next entry READY for a
 * position it cannot hold, the one after READY for a NOP a thousand laps ahead, the
 * next DONE for a wrong position, and runs on for 50 ms. */
#if GPUIO_CONF_IN(0)
GPUIO_KERNEL(gpuio_k_hostile_stamps)(const gpuio_channel *ch, gpuio_u64 *p) {
  const gpuio_u32 slots = ch->slots;
  if (gpuio_global_thread_id() == 1) {
    char buf[8];
    p[1] = (gpuio_u64)gpuio_read(ch, (gpuio_u32)p[0], buf, sizeof buf);
    return;
  }
  if (gpuio_global_thread_id() != 0) return;
  p[2] = (gpuio_u64)-1;
  if (ch->transport != GPUIO_TRANSPORT_FORWARD) return;
  const gpuio_u64 until = gpuio_now_ns() + 2000000000ull;
  gpuio_u64 k = (gpuio_u64)-1, pos = 0;
  while (k == (gpuio_u64)-1 && gpuio_now_ns() < until) {
    for (gpuio_u32 i = 0; i < slots; i++) {
      gpuio_forward_entry *e = gpuio_forward_entry_at(ch, i);
      const gpuio_u64 s = gpuio_ld_acquire_64(&e->stamp);
      const gpuio_u64 w0 = gpuio_ld_relaxed_64(&e->words[0]);
      if ((s & 3u) == GPUIO_STAMP_READY && (w0 & GPUIO_FORWARD_WORD_SET) && (w0 >> 1 & 0x7fffffffu) == GPUIO_OP_READ) {
        k = i;
        pos = s >> GPUIO_STAMP_SHIFT;
      }
    }
    gpuio_sleep_ns(100000u);
  }
  p[2] = k;
  if (k == (gpuio_u64)-1) return;
  /* The host takes a READY entry within a poll or two; stamped over sooner, the
   * read would never have been a request (the kernel's own loss, not the host's).
   * The pipe stays empty until the scribbles are done, so the read stays READY. */
  const gpuio_u64 taken = gpuio_now_ns() + 200000000ull;
  while (gpuio_now_ns() < taken) gpuio_sleep_ns(1000000u);
  gpuio_st_release_64(&gpuio_forward_entry_at(ch, (gpuio_u32)k)->stamp, gpuio_forward_stamp(pos + slots, GPUIO_STAMP_READY));
  const gpuio_u32 a = (gpuio_u32)(k + 1u) % slots, b = (gpuio_u32)(k + 2u) % slots, c = (gpuio_u32)(k + 3u) % slots;
  gpuio_st_release_64(&gpuio_forward_entry_at(ch, a)->stamp, gpuio_forward_stamp(a + 1u, GPUIO_STAMP_READY));
  gpuio_forward_entry *ahead = gpuio_forward_entry_at(ch, b);
  const gpuio_request nop = {GPUIO_OP_NOP, 0, 0, 0, 0, 0};
  gpuio_u64 w[GPUIO_FORWARD_WORDS];
  gpuio_forward_encode(&nop, w);
  for (gpuio_u32 j = 0; j < GPUIO_FORWARD_WORDS; ++j) gpuio_st_relaxed_64(&ahead->words[j], w[j]);
  gpuio_st_release_64(&ahead->stamp, gpuio_forward_stamp(b + 1000ull * slots, GPUIO_STAMP_READY));
  gpuio_st_release_64(&gpuio_forward_entry_at(ch, c)->stamp, gpuio_forward_stamp(c + 5u, GPUIO_STAMP_DONE));
  const gpuio_u64 rest = gpuio_now_ns() + 50000000ull;
  while (gpuio_now_ns() < rest) gpuio_sleep_ns(1000000u);
}
#endif

#endif /* GPUIO_CONFORMANCE_H */
