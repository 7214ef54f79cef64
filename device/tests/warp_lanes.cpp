/* The warp-wide code of gpuio.h on the host: up to 32 fibers play the lanes of one
 * warp and meet at every warp call (broadcast, ballot, min, sync), the way a GPU's
 * lanes run them together. The CPU device runs a warp of one lane, so without this
 * the lanes' hand-offs would only ever run on a GPU.
 *
 * What it checks: gpuio_impl_queue_fill_group, which the lanes of a sending group
 * (gpuio_send, gpuio_printf's log) call to write their consecutive cells of a queue
 * ring, leaves each cell exactly as the host's Receiver reads it (core/src/abi.rs,
 * `Queue`; core/src/queue/receiver.rs): word 0 the stamp (abi.rs `cell`: position
 * + 1, the header length, the group's lane count) for every cell but the group's
 * first (its publish comes after), then the message's bytes, zero to the end of its
 * last word;
 * nothing past that word and nothing outside the group's cells is written. Full and
 * partial groups, lengths from 0 to the maximum, messages at unaligned addresses,
 * groups that wrap around the ring's end, a ring other than the first, and a
 * header length other than the bytes copied (a printf line formatted in place).
 * And gpuio_impl_queue_send_group, the whole send of a group: the first lane reserves
 * the group's cells on the ring's device-local tail (reading the host's head when the
 * ring looks full), every lane gets its length back, and the group's first stamp is
 * there once it returns; on a full ring every lane gets -EAGAIN and nothing is written
 * or reserved.
 * And the lookups that hand a queue to those calls (gpuio_impl_queue, gpuio_impl_log)
 * take it only if its cells per ring are a power of two, as the host lays them out:
 * a cell's address masks its position with cells - 1.
 *
 * Usage: warp_lanes [cases]  (prints "N passed, M failed"; exits 1 on a failure). */
#define GPUIO_HOST_WARP 1
#include "gpuio.h"

#include <ucontext.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <vector>

extern "C" {
thread_local gpuio_cpu_thread gpuio_cpu_self = {};
}

/* ------------------------------------------------------------ the warp */
/* The lanes are fibers of one thread (ucontext), run in turn: a lane runs until its
 * next warp call, then the next lane runs; once every lane of the warp has reached
 * the call, they all go on. So the lanes meet at every warp call in lockstep, as on a
 * GPU, and the run is the same each time. A lane that reaches a different number of
 * warp calls than the others, or names another mask, is reported. */
namespace {

struct Lane {
  ucontext_t ctx;
  std::vector<char> stack;
  bool done = false;
  gpuio_u64 calls = 0; /* warp calls reached */
};
Lane lanes[GPUIO_WARP_SIZE];
ucontext_t scheduler;
gpuio_u32 my_lane = 0;
gpuio_u64 my_mask = 0;
gpuio_u64 slot[GPUIO_WARP_SIZE];
std::function<void(gpuio_u32)> lane_body;

void lane_main() {
  lane_body(my_lane);
  lanes[my_lane].done = true;
  swapcontext(&lanes[my_lane].ctx, &scheduler);
}

[[noreturn]] void broken(const char *what) {
  std::fprintf(stderr, "warp of %#llx: %s\n", my_mask, what);
  std::abort();
}

/* This lane reached a warp call for the lanes of `m`: the others run up to it. */
void meet(gpuio_u64 m) {
  /* Code run here calls with every running lane (a call for fewer would need the
   * others to go on without it). */
  if (m != my_mask) broken("a warp call names other lanes than the running ones");
  lanes[my_lane].calls++;
  swapcontext(&lanes[my_lane].ctx, &scheduler);
}

/* Every lane of `m` posts `v`; once all have, `f` reads the posts. */
template <typename F> auto exchange(gpuio_u64 m, gpuio_u64 v, F f) {
  slot[my_lane] = v;
  meet(m);
  const auto out = f(slot);
  meet(m); /* nobody posts again before everyone has read */
  return out;
}

} // namespace

GPUIO_FN gpuio_u64 gpuio_warp_active(void) { return my_mask; }
GPUIO_FN gpuio_u32 gpuio_warp_leader(gpuio_u64 m) { return (gpuio_u32)__builtin_ctzll(m); }
GPUIO_FN gpuio_u32 gpuio_warp_rank(gpuio_u64 m) {
  return (gpuio_u32)__builtin_popcountll(m & ((1ull << my_lane) - 1u));
}
GPUIO_FN gpuio_u32 gpuio_warp_count(gpuio_u64 m) { return (gpuio_u32)__builtin_popcountll(m); }
GPUIO_FN gpuio_u64 gpuio_warp_broadcast_64(gpuio_u64 m, gpuio_u64 v, gpuio_u32 lane) {
  if (!(m >> lane & 1u)) broken("a broadcast from a lane outside its mask");
  return exchange(m, v, [&](const gpuio_u64 *s) { return s[lane]; });
}
GPUIO_FN gpuio_u32 gpuio_warp_min_32(gpuio_u64 m, gpuio_u32 v) {
  return exchange(m, v, [&](const gpuio_u64 *s) {
    gpuio_u32 least = v;
    for (gpuio_u64 r = m; r; r &= r - 1u) {
      const gpuio_u32 x = (gpuio_u32)s[__builtin_ctzll(r)];
      least = x < least ? x : least;
    }
    return least;
  });
}
GPUIO_FN void gpuio_warp_sync(gpuio_u64 m) { (void)exchange(m, 0u, [](const gpuio_u64 *) { return 0; }); }
GPUIO_FN gpuio_u64 gpuio_warp_ballot(gpuio_u64 m, bool pred) {
  return exchange(m, pred, [&](const gpuio_u64 *s) {
    gpuio_u64 out = 0;
    for (gpuio_u64 r = m; r; r &= r - 1u)
      if (s[__builtin_ctzll(r)]) out |= r & (~r + 1u);
    return out;
  });
}

/* Runs `body(lane)` on every lane of `mask`, as warp `warp` of the grid. */
void run_warp(gpuio_u64 mask, gpuio_u64 warp, std::function<void(gpuio_u32)> body) {
  lane_body = std::move(body);
  my_mask = mask;
  for (gpuio_u32 l = 0; l < GPUIO_WARP_SIZE; ++l) {
    if (!(mask >> l & 1u)) continue;
    Lane &lane = lanes[l];
    lane.stack.assign(256 << 10, 0);
    lane.done = false;
    lane.calls = 0;
    getcontext(&lane.ctx);
    lane.ctx.uc_stack.ss_sp = lane.stack.data();
    lane.ctx.uc_stack.ss_size = lane.stack.size();
    lane.ctx.uc_link = nullptr;
    makecontext(&lane.ctx, lane_main, 0);
  }
  for (;;) {
    /* One turn: every lane runs to its next warp call or its end. */
    for (gpuio_u32 l = 0; l < GPUIO_WARP_SIZE; ++l) {
      if (!(mask >> l & 1u) || lanes[l].done) continue;
      my_lane = l;
      gpuio_cpu_self.global_id = warp * GPUIO_WARP_SIZE + l;
      swapcontext(&scheduler, &lanes[l].ctx);
    }
    bool all_done = true, any_done = false;
    gpuio_u64 calls = ~0ull;
    for (gpuio_u32 l = 0; l < GPUIO_WARP_SIZE; ++l) {
      if (!(mask >> l & 1u)) continue;
      all_done &= lanes[l].done;
      any_done |= lanes[l].done;
      if (calls == ~0ull) calls = lanes[l].calls;
      if (lanes[l].calls != calls) broken("the lanes reached different numbers of warp calls");
    }
    if (all_done) return;
    if (any_done) broken("a lane returned while others wait at a warp call");
  }
}

/* ------------------------------------------------------------ the cases */
namespace {

constexpr unsigned char kUntouched = 0xee;

unsigned char message_byte(gpuio_u32 lane, gpuio_u64 i) { return (unsigned char)(lane * 131u + i * 7u + 1u); }

/* What the lanes run: the fill alone; a whole send on a ring with room (as the
 * device last saw it, or only as the host's head says: the send reads it); a send on
 * a full ring that does not wait. */
enum class How { Fill, Send, SendAfterPoll, SendFull };

struct Case {
  How how;
  gpuio_u64 mask;
  gpuio_u32 rings, ring, cells, max_message;
  gpuio_u64 warp; /* which warp of the grid the lanes are (a send's ring is warp % rings) */
  gpuio_u64 base;
  gpuio_u32 len[GPUIO_WARP_SIZE];        /* bytes each lane's message has (lane-indexed) */
  gpuio_u32 header_len[GPUIO_WARP_SIZE]; /* what its header says */
  gpuio_u32 offset[GPUIO_WARP_SIZE];     /* where its message starts in its buffer (0..7) */
};

int failures = 0;

bool fail(const Case &c, const char *what, gpuio_u64 pos, gpuio_u64 byte) {
  if (failures++ < 10)
    std::fprintf(stderr, "mask %#llx ring %u/%u cells %u max %u base %llu: %s (position %llu, byte %llu)\n",
                 c.mask, c.ring, c.rings, c.cells, c.max_message, c.base, what, pos, byte);
  return false;
}

bool check(const Case &c) {
  const gpuio_u32 cell_size = (8u + c.max_message + 7u) / 8u * 8u;
  const gpuio_u64 ring_bytes = (gpuio_u64)c.cells * cell_size;
  std::vector<gpuio_u64> mem((ring_bytes * c.rings + 7u) / 8u);
  unsigned char *bytes = (unsigned char *)mem.data();
  std::memset(bytes, kUntouched, ring_bytes * c.rings);
  std::vector<gpuio_queue_ring> state(c.rings);
  std::vector<gpuio_queue_control> control(c.rings);
  std::memset((void *)state.data(), 0, sizeof(gpuio_queue_ring) * c.rings);
  std::memset((void *)control.data(), 0, sizeof(gpuio_queue_control) * c.rings);
  gpuio_queue q = {};
  q.direction = GPUIO_QUEUE_TO_HOST;
  q.rings = c.rings;
  q.cells = c.cells;
  q.cell_size = cell_size;
  q.max_message = c.max_message;
  q.cells_addr = (gpuio_u64)bytes;
  q.control = (gpuio_u64)control.data();
  q.ring_state = (gpuio_u64)state.data();
  /* The ring's words before the send: the next free position is `base`; the host has
   * taken everything before it (Send), or the device has not seen that yet (the
   * host's head is `base`, the device's copy a lap behind: SendAfterPoll), or the
   * host has taken nothing of the last lap (SendFull). */
  const gpuio_u32 count = (gpuio_u32)__builtin_popcountll(c.mask);
  gpuio_queue_ring &rs = state[c.ring];
  rs.tail = c.base;
  rs.cached_head = c.how == How::Send ? c.base : c.base - c.cells;
  control[c.ring].head = c.how == How::SendFull ? c.base - c.cells : c.base;
  gpuio_channel ch = {};
  ch.timeout_ns = 1000000000ull;
  gpuio_i64 result[GPUIO_WARP_SIZE] = {};
  run_warp(c.mask, c.warp, [&](gpuio_u32 lane) {
    alignas(8) unsigned char buf[4096 + 8];
    for (gpuio_u32 i = 0; i < c.len[lane]; ++i) buf[c.offset[lane] + i] = message_byte(lane, i);
    const char *msg = (const char *)buf + c.offset[lane];
    if (c.how == How::Fill)
      gpuio_impl_queue_fill_group(&q, c.ring, c.base, c.mask, msg, c.len[lane], c.header_len[lane]);
    else
      result[lane] = gpuio_impl_queue_send_group(&ch, &q, c.mask, msg, c.len[lane], false);
  });
  if (c.how != How::Fill) {
    const bool full = c.how == How::SendFull;
    for (gpuio_u32 l = 0; l < GPUIO_WARP_SIZE; ++l)
      if (c.mask >> l & 1u && result[l] != (full ? -GPUIO_EAGAIN : (gpuio_i64)c.len[l]))
        return fail(c, "a lane's send returned the wrong value", c.base, l);
    if (rs.tail != (full ? c.base : c.base + count)) return fail(c, "the ring's tail is wrong", rs.tail, 0);
    if (full) {
      for (gpuio_u64 b = 0; b < ring_bytes * c.rings; ++b)
        if (bytes[b] != kUntouched) return fail(c, "a send on a full ring wrote a cell", b / cell_size, b % cell_size);
      return true;
    }
  }
  /* Which lane wrote each cell of the ring, or none. */
  std::vector<int> writer(c.cells, -1);
  gpuio_u32 j = 0;
  for (gpuio_u64 r = c.mask; r; r &= r - 1u, ++j) writer[(c.base + j) % c.cells] = __builtin_ctzll(r);
  bool ok = true;
  for (gpuio_u32 ring = 0; ring < c.rings; ++ring)
    for (gpuio_u32 cell = 0; cell < c.cells; ++cell) {
      const unsigned char *p = bytes + ring * ring_bytes + (gpuio_u64)cell * cell_size;
      const int lane = ring == c.ring ? writer[cell] : -1;
      if (lane < 0) {
        for (gpuio_u32 b = 0; b < cell_size; ++b)
          if (p[b] != kUntouched) return fail(c, "a cell outside the group was written", cell, b);
        continue;
      }
      /* The position this cell holds: the one in [base, base + count) that maps here. */
      const gpuio_u64 pos = c.base + (cell + c.cells - c.base % c.cells) % c.cells;
      gpuio_u64 w0;
      std::memcpy(&w0, p, 8);
      /* The stamp as the host's abi.rs `cell::stamp` spells it. */
      const gpuio_u64 stamp = ((pos + 1u) & 0xffffffffull) | (gpuio_u64)c.header_len[lane] << 32 | (gpuio_u64)count << 53;
      if (pos == c.base && c.how == How::Fill) {
        for (int b = 0; b < 8; ++b)
          if (p[b] != kUntouched) return fail(c, "the group's first stamp was written before its publish", pos, b);
      } else if (w0 != stamp) {
        ok = fail(c, "the stamp is not the position, length and count", pos, 0);
      }
      const gpuio_u32 n = c.len[lane], words = (n + 7u) / 8u;
      for (gpuio_u32 b = 0; b < words * 8u; ++b) {
        const unsigned char want = b < n ? message_byte((gpuio_u32)lane, b) : 0u;
        if (p[8 + b] != want) {
          ok = fail(c, b < n ? "a message byte is wrong" : "the last word is not zero past the message", pos, 8 + b);
          break;
        }
      }
      for (gpuio_u32 b = 8 + words * 8u; b < cell_size; ++b)
        if (p[b] != kUntouched) {
          ok = fail(c, "a byte past the message's last word was written", pos, b);
          break;
        }
    }
  return ok;
}

Case uniform(gpuio_u64 mask, gpuio_u32 max, gpuio_u32 len, gpuio_u32 cells, gpuio_u64 base) {
  Case c = {};
  c.how = How::Fill;
  c.mask = mask;
  c.rings = 1;
  c.cells = cells;
  c.max_message = max;
  c.base = base;
  for (gpuio_u32 l = 0; l < GPUIO_WARP_SIZE; ++l) c.len[l] = c.header_len[l] = len;
  return c;
}

} // namespace

/* A channel with one queue to the host behind endpoint 0 (also endpoint 1's printf
 * log) of `cells` cells a ring: whether gpuio_impl_queue and gpuio_impl_log take it. */
bool lookups_take(gpuio_u32 cells, bool want) {
  alignas(8) static unsigned char ring[4096];
  gpuio_queue q = {};
  q.direction = GPUIO_QUEUE_TO_HOST;
  q.rings = 1;
  q.cells = cells;
  q.cell_size = 16;
  q.max_message = 8;
  q.cells_addr = (gpuio_u64)ring;
  gpuio_endpoint ep[2] = {};
  ep[0].kind = GPUIO_EP_HOST_QUEUE;
  ep[0].access = GPUIO_ACCESS_WRITE;
  ep[1].log = 1;
  gpuio_channel ch = {};
  ch.endpoints = (gpuio_u64)ep;
  ch.endpoint_count = 2;
  ch.queues = (gpuio_u64)&q;
  ch.queue_count = 1;
  int err = 0;
  const bool queue = gpuio_impl_queue(&ch, 0, GPUIO_ACCESS_WRITE, &err) == &q;
  const bool log = gpuio_impl_log(&ch, 1) == &q;
  if (queue != want || log != want || err != (want ? 0 : -GPUIO_EPROTO)) {
    std::fprintf(stderr, "cells %u: queue %s (err %d), log %s; expected both %s\n", cells, queue ? "taken" : "refused",
                 err, log ? "taken" : "refused", want ? "taken" : "refused");
    return false;
  }
  return true;
}

int main(int argc, char **argv) {
  const long random_cases = argc > 1 ? std::atol(argv[1]) : 300;
  int lookups = 0, lookups_passed = 0;
  for (gpuio_u32 cells : {1u, 2u, 64u, 1u << 24}) ++lookups, lookups_passed += lookups_take(cells, true) ? 1 : 0;
  for (gpuio_u32 cells : {0u, 3u, 48u, 1000u, (1u << 24) + 1u})
    ++lookups, lookups_passed += lookups_take(cells, false) ? 1 : 0;
  std::vector<Case> cases;
  const gpuio_u64 full = 0xffffffffull;
  /* The bench's shapes: 64, 256 and 4096 B from a full warp. */
  cases.push_back(uniform(full, 64, 64, 256, 0));
  cases.push_back(uniform(full, 64, 64, 256, 32));
  cases.push_back(uniform(full, 256, 256, 64, 0));
  cases.push_back(uniform(full, 4096, 4096, 64, 32));
  /* Short messages in big cells; empty ones; one lane; a partial group. */
  cases.push_back(uniform(full, 4096, 8, 64, 0));
  cases.push_back(uniform(full, 64, 0, 64, 0));
  cases.push_back(uniform(1ull << 7, 64, 64, 64, 5));
  cases.push_back(uniform(0x5a5a5a5aull, 100, 77, 64, 3));
  /* A group that wraps around the ring's end, on the second of two rings. */
  Case wrap = uniform(full, 64, 61, 64, 50);
  wrap.rings = 2;
  wrap.ring = 1;
  cases.push_back(wrap);
  /* A group across position 2^32 - 1, whose stamps' 32-bit tags wrap to 0 and on. */
  cases.push_back(uniform(full, 64, 64, 64, 0xffffffffull - 16u));
  /* A printf line formatted in place: the header says 37 bytes, none copied. */
  Case log = uniform(0xf0f0ull, 64, 0, 64, 9);
  for (auto &h : log.header_len) h = 37;
  cases.push_back(log);
  /* Whole sends: a full warp, a partial group wrapping on ring 2 of 3, one lane; with
   * room seen, room only in the host's head, and no room. */
  for (How how : {How::Send, How::SendAfterPoll, How::SendFull}) {
    Case send = uniform(full, 64, 64, 256, 512);
    send.how = how;
    cases.push_back(send);
    Case part = uniform(0x00ff00f0ull, 100, 33, 64, 250);
    part.how = how;
    part.rings = 3;
    part.ring = 2;
    part.warp = 5;
    cases.push_back(part);
    Case one = uniform(1ull << 31, 64, 17, 32, 64);
    one.how = how;
    cases.push_back(one);
  }

  std::mt19937_64 rng(0x6770'75696fULL);
  const gpuio_u32 maxes[] = {0, 8, 24, 64, 100, 256, 1000, 4096};
  for (long i = 0; i < random_cases; ++i) {
    Case c = {};
    c.how = How::Fill;
    do c.mask = rng() & full;
    while (!c.mask);
    c.max_message = maxes[rng() % (sizeof maxes / sizeof maxes[0])];
    c.rings = 1u + (gpuio_u32)(rng() % 3u);
    c.ring = (gpuio_u32)(rng() % c.rings);
    c.cells = 32u << (rng() % 3u);
    c.base = rng() % 1000u;
    for (gpuio_u32 l = 0; l < GPUIO_WARP_SIZE; ++l) {
      c.len[l] = c.max_message ? (gpuio_u32)(rng() % (c.max_message + 1u)) : 0u;
      c.header_len[l] = c.len[l];
      c.offset[l] = (gpuio_u32)(rng() % 8u);
    }
    cases.push_back(c);
  }
  int passed = 0;
  for (const Case &c : cases) passed += check(c) ? 1 : 0;
  passed += lookups_passed;
  const int failed = (int)cases.size() + lookups - passed;
  std::printf("%d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
