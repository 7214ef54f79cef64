// One CPU thread drives an SQPOLL io_uring with NOPs, `depth` in flight, and counts
// completions per second: the kernel's side of direct's small requests, with no GPU.
// Measurement only. Usage: sqpollnop [total] [depth] [sqpoll 0/1] [entries]
#define _GNU_SOURCE
#include <linux/io_uring.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
int main(int argc, char **argv) {
  long total = argc > 1 ? atol(argv[1]) : 2000000;
  unsigned depth = argc > 2 ? atoi(argv[2]) : 256;
  int sqpoll = argc > 3 ? atoi(argv[3]) : 1;
  unsigned entries = argc > 4 ? atoi(argv[4]) : 256;
  struct io_uring_params p; memset(&p, 0, sizeof p);
  if (sqpoll) { p.flags = IORING_SETUP_SQPOLL; p.sq_thread_idle = 1000; }
  int fd = syscall(__NR_io_uring_setup, entries, &p);
  if (fd < 0) { perror("io_uring_setup"); return 1; }
  size_t sqsz = p.sq_off.array + p.sq_entries * 4, cqsz = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
  char *sq = mmap(0, sqsz, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, IORING_OFF_SQ_RING);
  char *cq = mmap(0, cqsz, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, IORING_OFF_CQ_RING);
  struct io_uring_sqe *sqes = mmap(0, p.sq_entries * sizeof(struct io_uring_sqe), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, IORING_OFF_SQES);
  if (sq == MAP_FAILED || cq == MAP_FAILED || sqes == MAP_FAILED) { perror("mmap"); return 1; }
  _Atomic unsigned *sq_tail = (void *)(sq + p.sq_off.tail), *sq_head = (void *)(sq + p.sq_off.head), *sq_flags = (void *)(sq + p.sq_off.flags);
  unsigned *sq_array = (void *)(sq + p.sq_off.array), sq_mask = *(unsigned *)(sq + p.sq_off.ring_mask);
  _Atomic unsigned *cq_tail = (void *)(cq + p.cq_off.tail), *cq_head = (void *)(cq + p.cq_off.head);
  unsigned cq_mask = *(unsigned *)(cq + p.cq_off.ring_mask);
  struct io_uring_cqe *cqes = (void *)(cq + p.cq_off.cqes);
  long submitted = 0, done = 0, wakes = 0, enters = 0; unsigned tail = 0, head = 0;
  double t0 = now(), deadline = t0 + 30;
  while (done < total) {
    unsigned n = 0;
    while (submitted < total && submitted - done < depth && tail - atomic_load_explicit(sq_head, memory_order_acquire) < p.sq_entries) {
      struct io_uring_sqe *e = &sqes[tail & sq_mask]; memset(e, 0, sizeof *e);
      e->opcode = IORING_OP_NOP; e->user_data = submitted;
      sq_array[tail & sq_mask] = tail & sq_mask; tail++; submitted++; n++;
    }
    if (n) atomic_store_explicit(sq_tail, tail, memory_order_release);
    if (sqpoll) {
      atomic_thread_fence(memory_order_seq_cst);
      if (n && (atomic_load_explicit(sq_flags, memory_order_relaxed) & IORING_SQ_NEED_WAKEUP)) { syscall(__NR_io_uring_enter, fd, 0, 0, IORING_ENTER_SQ_WAKEUP, 0, 0); wakes++; }
    } else if (n) { syscall(__NR_io_uring_enter, fd, n, 0, 0, 0, 0); enters++; }
    unsigned t = atomic_load_explicit(cq_tail, memory_order_acquire);
    while (head != t) { if (cqes[head & cq_mask].res != 0) { fprintf(stderr, "res %d\n", cqes[head & cq_mask].res); return 1; } head++; done++; }
    atomic_store_explicit(cq_head, head, memory_order_release);
    if (now() > deadline) { fprintf(stderr, "timeout: %ld of %ld\n", done, total); return 1; }
  }
  double dt = now() - t0;
  printf("sqpoll=%d depth=%u entries=%u: %ld NOPs in %.3f s = %.3f M/s (wakes %ld, enters %ld)\n", sqpoll, depth, p.sq_entries, total, dt, total / dt / 1e6, wakes, enters);
  return 0;
}
