/* gpuio/arch.h — the only part of the header that differs per compile target.
 *
 * Three targets: CUDA (nvcc, NVRTC), HIP (hipcc, hiprtc) and host C++ (g++/clang++,
 * the CPU device). Everything above this file is shared code. Each target supplies:
 *
 *   GPUIO_FN                     function qualifier for header functions
 *   GPUIO_METHOD                 the same for member functions (no `static`)
 *   GPUIO_KERNEL(name)           a kernel entry point with C linkage
 *   GPUIO_NOINLINE               a function compiled once per kernel and called (the formatter)
 *   GPUIO_ENGINE                 the engines behind the public calls (gpuio_impl_transfer,
 *                                _transfer_warp, _request_staged, _request_raw, _start,
 *                                _send, _recv, a queue group's reserve and fill, a
 *                                log-less printf's transport steps): inline in every call
 *                                site (GPUIO_FN), or compiled once per kernel and called
 *                                (GPUIO_NOINLINE) where the kernel file defines
 *                                GPUIO_OUT_OF_LINE before including gpuio.h. See gpuio.h
 *                                for what each costs.
 *   GPUIO_UNROLL                 unroll the loop that follows (batches of loads in flight)
 *   gpuio_ld_acquire_{32,64}     system-scope acquire load (observe the other side)
 *   gpuio_st_release_{32,64}     system-scope release store (publish to the other side)
 *   gpuio_ld_relaxed_{32,64}     system-scope relaxed load (volatile read)
 *   gpuio_st_relaxed_{32,64}     system-scope relaxed store
 *   gpuio_ld_relaxed_pair(p, a, b)
 *                                system-scope relaxed load of two adjacent words, in one
 *                                16-byte load where the target has one (p 16-byte
 *                                aligned)
 *   gpuio_ld_fixed_pair(p, a, b) two adjacent words nobody writes while the kernel runs
 *                                (the descriptor's), in one 16-byte load where they stand
 *                                in the code (p 16-byte aligned). On CUDA a weak load the
 *                                compiler may not move, so that a batch of them is in
 *                                flight together, and fewer load instructions make fewer
 *                                trips to L2 (see gpuio_impl_check_channel)
 *   gpuio_fence_sc()             sequentially consistent fence, system scope
 *   gpuio_ld_acquire_dev_{32,64}, gpuio_st_release_dev_{32,64}, gpuio_fence_dev(),
 *   gpuio_fence_sc_dev()
 *                                the same at device scope, for device-local words that
 *                                only the device's own threads read and write (request
 *                                turns, slot states): a system-scope release or fence
 *                                waits until the thread's earlier writes could be seen
 *                                across PCIe, ~1 us each on an H100 (measured: one NOP
 *                                spent 3.1 us taking its slot and 1.1 us giving it back)
 *   gpuio_fetch_add_64           device atomics on device-local memory
 *   gpuio_cas_{32,64}            device atomics on device-local memory (returns old)
 *   gpuio_cas_acquire_dev_64     the same with acquire semantics at device scope, which
 *                                on CUDA is the compare-and-swap and an L1 invalidate,
 *                                not a fence's wait for the thread's earlier writes
 *   gpuio_and_release_dev_64(p, v), gpuio_add_release_dev_64(p, v), gpuio_add_dev_64(p, v)
 *                                *p &= v, *p += v: device-scope atomics, with release
 *                                or relaxed, no result (CUDA: a reduction, which the
 *                                thread does not wait for)
 *   gpuio_xchg_32
 *   gpuio_ctz_32(x)              trailing zero bits of x (x != 0)
 *   gpuio_popc_64(x)             set bits of x (a ballot's lanes)
 *   gpuio_now_ns()               a monotonic clock in nanoseconds (deadlines)
 *   gpuio_pause()                back off inside a spin loop
 *   gpuio_sleep_ns(ns)           back off for about ns nanoseconds (GPUs; the host yields)
 *   gpuio_global_thread_id(), gpuio_lane_id(), gpuio_warp_id(), gpuio_thread_count()
 *   gpuio_warp_active()          the lanes of this warp executing this call together (mask)
 *   gpuio_warp_leader(m), gpuio_warp_rank(m), gpuio_warp_count(m)   lowest lane of m, this
 *                                lane's rank among m's lanes, how many lanes m has
 *   gpuio_warp_broadcast_64(m, v, lane)   lane's v, to every lane of m (all of m must call)
 *   gpuio_warp_min_32(m, v)      the least v over the lanes of m, to each (all of m must call)
 *   gpuio_warp_sync(m)           the lanes of m wait for each other (all of m must call)
 * (on the host target a warp is one thread: mask 1, leader 0, rank 0, count 1)
 *   GPUIO_WARP_SIZE              lanes per warp (wavefront): 32 on CUDA and the host,
 *                                64 or 32 on HIP depending on the target
 */
#ifndef GPUIO_ARCH_H
#define GPUIO_ARCH_H

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define GPUIO_TARGET_CUDA 1
#elif defined(__HIPCC__) || defined(__HIPCC_RTC__) || defined(__HIP_DEVICE_COMPILE__)
#define GPUIO_TARGET_HIP 1
#else
#define GPUIO_TARGET_HOST 1
#endif

/* ------------------------------------------------------------------ CUDA */
#if defined(GPUIO_TARGET_CUDA)
#define GPUIO_WARP_SIZE 32u
#define GPUIO_FN static __device__ __forceinline__
#define GPUIO_METHOD __device__ __forceinline__
#define GPUIO_NOINLINE static __device__ __noinline__
#define GPUIO_UNROLL _Pragma("unroll")
/* Every kernel can be launched with blocks of up to GPUIO_MAX_BLOCK threads (1024
 * unless defined before gpuio.h is included): the compiler keeps its register use
 * within what such a block allows, 64 registers a thread at 1024, and spills the
 * rest to local memory. With GPUIO_MAX_BLOCK 256 it may use up to 255, which
 * shortens every call. On CUDA the runtime therefore compiles each kernel file that
 * does not name GPUIO_MAX_BLOCK twice, the second time with it defined to 256, and a
 * launch of blocks of up to 256 threads whose whole grid is resident at once runs
 * that build (GPUIO_SMALL_BLOCK_BUILD=0 turns it off). On an H100 (2026-12-07, run
 * 206, `gpuio bench --only latency` with the build off and on, interleaved three
 * times) one thread's forward NOP p50 3.49-3.58 us against 3.52-3.68, a forward
 * 64 B pwrite 6.37-6.56 against 6.56-6.91, direct's NOP 14.5-14.8 against 15.1-15.5.
 * A file may set its own bound instead; on CUDA a launch with larger blocks is then
 * an error that names it. */
#ifndef GPUIO_MAX_BLOCK
#define GPUIO_MAX_BLOCK 1024
#endif
#define GPUIO_KERNEL(name) extern "C" __global__ void __launch_bounds__(GPUIO_MAX_BLOCK) name

GPUIO_FN gpuio_u32 gpuio_ld_acquire_32(const gpuio_u32 *p) {
  gpuio_u32 v;
  asm volatile("ld.acquire.sys.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}
GPUIO_FN gpuio_u64 gpuio_ld_acquire_64(const gpuio_u64 *p) {
  gpuio_u64 v;
  asm volatile("ld.acquire.sys.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}
GPUIO_FN void gpuio_st_release_32(gpuio_u32 *p, gpuio_u32 v) {
  asm volatile("st.release.sys.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}
GPUIO_FN void gpuio_st_release_64(gpuio_u64 *p, gpuio_u64 v) {
  asm volatile("st.release.sys.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}
GPUIO_FN gpuio_u32 gpuio_ld_relaxed_32(const gpuio_u32 *p) {
  gpuio_u32 v;
  asm volatile("ld.relaxed.sys.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}
GPUIO_FN gpuio_u64 gpuio_ld_relaxed_64(const gpuio_u64 *p) {
  gpuio_u64 v;
  asm volatile("ld.relaxed.sys.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}
GPUIO_FN void gpuio_ld_relaxed_pair(const void *p, gpuio_u64 *a, gpuio_u64 *b) {
  gpuio_u64 x, y;
  asm volatile("ld.relaxed.sys.v2.u64 {%0, %1}, [%2];" : "=l"(x), "=l"(y) : "l"(p) : "memory");
  *a = x;
  *b = y;
}
GPUIO_FN void gpuio_ld_fixed_pair(const void *p, gpuio_u64 *a, gpuio_u64 *b) {
  gpuio_u64 x, y;
  asm volatile("ld.v2.u64 {%0, %1}, [%2];" : "=l"(x), "=l"(y) : "l"(p) : "memory");
  *a = x;
  *b = y;
}
GPUIO_FN void gpuio_st_relaxed_32(gpuio_u32 *p, gpuio_u32 v) {
  asm volatile("st.relaxed.sys.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}
GPUIO_FN void gpuio_st_relaxed_64(gpuio_u64 *p, gpuio_u64 v) {
  asm volatile("st.relaxed.sys.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}
GPUIO_FN void gpuio_fence_sc(void) { asm volatile("fence.sc.sys;" ::: "memory"); }
GPUIO_FN gpuio_u32 gpuio_ld_acquire_dev_32(const gpuio_u32 *p) {
  gpuio_u32 v;
  asm volatile("ld.acquire.gpu.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}
GPUIO_FN gpuio_u64 gpuio_ld_acquire_dev_64(const gpuio_u64 *p) {
  gpuio_u64 v;
  asm volatile("ld.acquire.gpu.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}
GPUIO_FN void gpuio_st_release_dev_32(gpuio_u32 *p, gpuio_u32 v) {
  asm volatile("st.release.gpu.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}
GPUIO_FN void gpuio_st_release_dev_64(gpuio_u64 *p, gpuio_u64 v) {
  asm volatile("st.release.gpu.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}
GPUIO_FN void gpuio_fence_dev(void) { asm volatile("fence.acq_rel.gpu;" ::: "memory"); }
GPUIO_FN void gpuio_fence_sc_dev(void) { asm volatile("fence.sc.gpu;" ::: "memory"); }
GPUIO_FN gpuio_u64 gpuio_fetch_add_64(gpuio_u64 *p, gpuio_u64 v) {
  return atomicAdd((unsigned long long *)p, (unsigned long long)v);
}
GPUIO_FN gpuio_u32 gpuio_cas_32(gpuio_u32 *p, gpuio_u32 expect, gpuio_u32 desired) {
  return atomicCAS((unsigned int *)p, expect, desired);
}
GPUIO_FN gpuio_u64 gpuio_cas_64(gpuio_u64 *p, gpuio_u64 expect, gpuio_u64 desired) {
  return atomicCAS((unsigned long long *)p, expect, desired);
}
GPUIO_FN gpuio_u64 gpuio_cas_acquire_dev_64(gpuio_u64 *p, gpuio_u64 expect, gpuio_u64 desired) {
  gpuio_u64 old;
  asm volatile("atom.acquire.gpu.cas.b64 %0, [%1], %2, %3;" : "=l"(old) : "l"(p), "l"(expect), "l"(desired) : "memory");
  return old;
}
GPUIO_FN void gpuio_and_release_dev_64(gpuio_u64 *p, gpuio_u64 v) {
  asm volatile("red.release.gpu.and.b64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}
GPUIO_FN void gpuio_add_release_dev_64(gpuio_u64 *p, gpuio_u64 v) {
  asm volatile("red.release.gpu.add.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}
GPUIO_FN void gpuio_add_dev_64(gpuio_u64 *p, gpuio_u64 v) {
  asm volatile("red.relaxed.gpu.add.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}
GPUIO_FN gpuio_u32 gpuio_xchg_32(gpuio_u32 *p, gpuio_u32 v) { return atomicExch((unsigned int *)p, v); }
GPUIO_FN gpuio_u64 gpuio_now_ns(void) {
  gpuio_u64 t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
GPUIO_FN void gpuio_pause(void) { __nanosleep(64); }
GPUIO_FN void gpuio_sleep_ns(gpuio_u32 ns) { __nanosleep(ns); }
GPUIO_FN gpuio_u64 gpuio_global_thread_id(void) {
  return (gpuio_u64)blockIdx.x * blockDim.x + threadIdx.x;
}
GPUIO_FN gpuio_u64 gpuio_thread_count(void) { return (gpuio_u64)gridDim.x * blockDim.x; }
GPUIO_FN gpuio_u32 gpuio_lane_id(void) { return threadIdx.x % GPUIO_WARP_SIZE; }
GPUIO_FN gpuio_u64 gpuio_warp_id(void) { return gpuio_global_thread_id() / GPUIO_WARP_SIZE; }
GPUIO_FN gpuio_u64 gpuio_warp_active(void) { return __activemask(); }
GPUIO_FN gpuio_u32 gpuio_ctz_32(gpuio_u32 x) { return (gpuio_u32)(__ffs(x) - 1); }
GPUIO_FN gpuio_u32 gpuio_popc_64(gpuio_u64 x) { return (gpuio_u32)__popcll((unsigned long long)x); }
GPUIO_FN gpuio_u32 gpuio_warp_leader(gpuio_u64 m) { return (gpuio_u32)(__ffs((unsigned)m) - 1); }
GPUIO_FN gpuio_u32 gpuio_warp_rank(gpuio_u64 m) {
  gpuio_u32 lt;
  asm("mov.u32 %0, %%lanemask_lt;" : "=r"(lt));
  return (gpuio_u32)__popc((unsigned)m & lt);
}
GPUIO_FN gpuio_u32 gpuio_warp_count(gpuio_u64 m) { return (gpuio_u32)__popc((unsigned)m); }
GPUIO_FN gpuio_u64 gpuio_warp_broadcast_64(gpuio_u64 m, gpuio_u64 v, gpuio_u32 lane) {
  return __shfl_sync((unsigned)m, (unsigned long long)v, (int)lane);
}
GPUIO_FN void gpuio_warp_sync(gpuio_u64 m) { __syncwarp((unsigned)m); }
GPUIO_FN gpuio_u64 gpuio_warp_ballot(gpuio_u64 m, bool pred) { return __ballot_sync((unsigned)m, pred); }
GPUIO_FN gpuio_u32 gpuio_warp_min_32(gpuio_u64 m, gpuio_u32 v) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  return __reduce_min_sync((unsigned)m, v);
#else
  gpuio_u32 least = v;
  for (unsigned rest = (unsigned)m; rest; rest &= rest - 1u) {
    const gpuio_u32 x = __shfl_sync((unsigned)m, v, __ffs(rest) - 1);
    least = x < least ? x : least;
  }
  return least;
#endif
}

/* ------------------------------------------------------------------- HIP
 *
 * AMD: compiled in CI for gfx90a, gfx940, gfx1030, never run on AMD hardware
 * (device/tests/hip_compile.rs, with the distribution's hipcc: clang 15, HIP 5.2).
 *
 * No HIP header is included or needed: hiprtc compiles this with no system header,
 * and hipcc declares threadIdx & co. only where the kernel file includes
 * <hip/hip_runtime.h> itself. So threadIdx / blockIdx / blockDim / gridDim and
 * wall_clock64() are not used; the clang builtins they are made of are used instead:
 *   thread in block   __builtin_amdgcn_workitem_id_x()      (threadIdx.x)
 *   block             __builtin_amdgcn_workgroup_id_x()     (blockIdx.x)
 *   block size        __builtin_amdgcn_workgroup_size_x()   (blockDim.x, the launch's
 *                     size, also in a partial last block)
 *   threads in grid   __builtin_amdgcn_grid_size_x()        (the dispatch's grid size
 *                     in work-items, = gridDim.x * blockDim.x for every HIP launch)
 *   wall clock        s_memrealtime, a constant-rate counter that gfx90a, gfx940 and
 *                     gfx1030 all have (checked in the generated code). gfx11 has none:
 *                     there __builtin_readsteadycounter (clang >= 19, taken whenever
 *                     the compiler has it) reads the same clock another way; an older
 *                     clang cannot compile this header for gfx11.
 *                     Assumed to tick at 100 MHz, the rate of current AMD GPUs; the
 *                     real rate is hipDeviceAttributeWallClockRate. Only deadlines use
 *                     it, so a wrong rate scales timeouts, it breaks nothing else.
 * Wavefronts are 64 lanes on gfx9 (gfx90a, gfx940) and 32 on gfx10/11 (gfx1030) unless
 * compiled with -mwavefrontsize64: GPUIO_WARP_SIZE follows the target. Nothing in the
 * header assumes 32 lanes: only gpuio_lane_id() / gpuio_warp_id() use the width, and
 * the mailbox's default of 64 ports gives every lane of a 64-lane wavefront its own.
 */
#elif defined(GPUIO_TARGET_HIP)
/* hipcc (clang's HIP wrapper header) and hiprtc (its preamble) define these; a bare
 * `clang -x hip -nogpuinc` does not. Same spelling as theirs, so no redefinition. */
#ifndef __device__
#define __device__ __attribute__((device))
#endif
#ifndef __global__
#define __global__ __attribute__((global))
#endif
#if __has_builtin(__builtin_amdgcn_wavefrontsize)
#define GPUIO_WARP_SIZE ((gpuio_u32)__builtin_amdgcn_wavefrontsize())
#elif defined(__AMDGCN_WAVEFRONT_SIZE)
#define GPUIO_WARP_SIZE ((gpuio_u32)__AMDGCN_WAVEFRONT_SIZE)
#else
/* hipcc's host pass: device functions are parsed there, never run. */
#define GPUIO_WARP_SIZE 64u
#endif
#define GPUIO_FN static __device__ inline __attribute__((always_inline))
#define GPUIO_METHOD __device__ inline __attribute__((always_inline))
#define GPUIO_NOINLINE static __device__ __attribute__((noinline))
#define GPUIO_UNROLL _Pragma("unroll")
#define GPUIO_KERNEL(name) extern "C" __global__ void name
#define GPUIO_SYS __HIP_MEMORY_SCOPE_SYSTEM
#define GPUIO_AGENT __HIP_MEMORY_SCOPE_AGENT

GPUIO_FN gpuio_u32 gpuio_ld_acquire_32(const gpuio_u32 *p) { return __hip_atomic_load(p, __ATOMIC_ACQUIRE, GPUIO_SYS); }
GPUIO_FN gpuio_u64 gpuio_ld_acquire_64(const gpuio_u64 *p) { return __hip_atomic_load(p, __ATOMIC_ACQUIRE, GPUIO_SYS); }
GPUIO_FN void gpuio_st_release_32(gpuio_u32 *p, gpuio_u32 v) { __hip_atomic_store(p, v, __ATOMIC_RELEASE, GPUIO_SYS); }
GPUIO_FN void gpuio_st_release_64(gpuio_u64 *p, gpuio_u64 v) { __hip_atomic_store(p, v, __ATOMIC_RELEASE, GPUIO_SYS); }
GPUIO_FN gpuio_u32 gpuio_ld_relaxed_32(const gpuio_u32 *p) { return __hip_atomic_load(p, __ATOMIC_RELAXED, GPUIO_SYS); }
GPUIO_FN gpuio_u64 gpuio_ld_relaxed_64(const gpuio_u64 *p) { return __hip_atomic_load(p, __ATOMIC_RELAXED, GPUIO_SYS); }
GPUIO_FN void gpuio_ld_relaxed_pair(const void *p, gpuio_u64 *a, gpuio_u64 *b) {
  *a = gpuio_ld_relaxed_64((const gpuio_u64 *)p);
  *b = gpuio_ld_relaxed_64((const gpuio_u64 *)p + 1);
}
GPUIO_FN void gpuio_ld_fixed_pair(const void *p, gpuio_u64 *a, gpuio_u64 *b) { gpuio_ld_relaxed_pair(p, a, b); }
GPUIO_FN void gpuio_st_relaxed_32(gpuio_u32 *p, gpuio_u32 v) { __hip_atomic_store(p, v, __ATOMIC_RELAXED, GPUIO_SYS); }
GPUIO_FN void gpuio_st_relaxed_64(gpuio_u64 *p, gpuio_u64 v) { __hip_atomic_store(p, v, __ATOMIC_RELAXED, GPUIO_SYS); }
GPUIO_FN void gpuio_fence_sc(void) { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
GPUIO_FN gpuio_u32 gpuio_ld_acquire_dev_32(const gpuio_u32 *p) {
  return __hip_atomic_load(p, __ATOMIC_ACQUIRE, GPUIO_AGENT);
}
GPUIO_FN gpuio_u64 gpuio_ld_acquire_dev_64(const gpuio_u64 *p) {
  return __hip_atomic_load(p, __ATOMIC_ACQUIRE, GPUIO_AGENT);
}
GPUIO_FN void gpuio_st_release_dev_32(gpuio_u32 *p, gpuio_u32 v) {
  __hip_atomic_store(p, v, __ATOMIC_RELEASE, GPUIO_AGENT);
}
GPUIO_FN void gpuio_st_release_dev_64(gpuio_u64 *p, gpuio_u64 v) {
  __hip_atomic_store(p, v, __ATOMIC_RELEASE, GPUIO_AGENT);
}
GPUIO_FN void gpuio_fence_dev(void) { __builtin_amdgcn_fence(__ATOMIC_ACQ_REL, "agent"); }
GPUIO_FN void gpuio_fence_sc_dev(void) { __builtin_amdgcn_fence(__ATOMIC_SEQ_CST, "agent"); }
GPUIO_FN gpuio_u64 gpuio_fetch_add_64(gpuio_u64 *p, gpuio_u64 v) {
  return __hip_atomic_fetch_add(p, v, __ATOMIC_RELAXED, GPUIO_AGENT);
}
GPUIO_FN gpuio_u32 gpuio_cas_32(gpuio_u32 *p, gpuio_u32 expect, gpuio_u32 desired) {
  __hip_atomic_compare_exchange_strong(p, &expect, desired, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE, GPUIO_AGENT);
  return expect;
}
GPUIO_FN gpuio_u64 gpuio_cas_64(gpuio_u64 *p, gpuio_u64 expect, gpuio_u64 desired) {
  __hip_atomic_compare_exchange_strong(p, &expect, desired, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE, GPUIO_AGENT);
  return expect;
}
/* gpuio_cas_64 already acquires (and releases). */
GPUIO_FN gpuio_u64 gpuio_cas_acquire_dev_64(gpuio_u64 *p, gpuio_u64 expect, gpuio_u64 desired) {
  return gpuio_cas_64(p, expect, desired);
}
GPUIO_FN void gpuio_and_release_dev_64(gpuio_u64 *p, gpuio_u64 v) {
  (void)__hip_atomic_fetch_and(p, v, __ATOMIC_RELEASE, GPUIO_AGENT);
}
GPUIO_FN void gpuio_add_release_dev_64(gpuio_u64 *p, gpuio_u64 v) {
  (void)__hip_atomic_fetch_add(p, v, __ATOMIC_RELEASE, GPUIO_AGENT);
}
GPUIO_FN void gpuio_add_dev_64(gpuio_u64 *p, gpuio_u64 v) {
  (void)__hip_atomic_fetch_add(p, v, __ATOMIC_RELAXED, GPUIO_AGENT);
}
GPUIO_FN gpuio_u32 gpuio_xchg_32(gpuio_u32 *p, gpuio_u32 v) {
  return __hip_atomic_exchange(p, v, __ATOMIC_ACQ_REL, GPUIO_AGENT);
}
/* A constant-rate counter, assumed to tick at 100 MHz (see above). */
GPUIO_FN gpuio_u64 gpuio_now_ns(void) {
#if __has_builtin(__builtin_readsteadycounter)
  return (gpuio_u64)__builtin_readsteadycounter() * 10ull;
#else
  return (gpuio_u64)__builtin_amdgcn_s_memrealtime() * 10ull;
#endif
}
GPUIO_FN void gpuio_pause(void) { __builtin_amdgcn_s_sleep(2); }
/* s_sleep takes an immediate (units of 64 clocks): sleep in steps of about 64 ns. */
GPUIO_FN void gpuio_sleep_ns(gpuio_u32 ns) {
  for (gpuio_u32 i = 0; i <= ns >> 6; i++) __builtin_amdgcn_s_sleep(2);
}
GPUIO_FN gpuio_u64 gpuio_global_thread_id(void) {
  return (gpuio_u64)__builtin_amdgcn_workgroup_id_x() * __builtin_amdgcn_workgroup_size_x() +
         __builtin_amdgcn_workitem_id_x();
}
GPUIO_FN gpuio_u64 gpuio_thread_count(void) { return (gpuio_u64)__builtin_amdgcn_grid_size_x(); }
GPUIO_FN gpuio_u32 gpuio_lane_id(void) { return __builtin_amdgcn_workitem_id_x() % GPUIO_WARP_SIZE; }
GPUIO_FN gpuio_u64 gpuio_warp_id(void) { return gpuio_global_thread_id() / GPUIO_WARP_SIZE; }
GPUIO_FN gpuio_u64 gpuio_warp_active(void) { return (gpuio_u64)__builtin_amdgcn_read_exec(); }
GPUIO_FN gpuio_u32 gpuio_ctz_32(gpuio_u32 x) { return (gpuio_u32)__builtin_ctz(x); }
GPUIO_FN gpuio_u32 gpuio_popc_64(gpuio_u64 x) { return (gpuio_u32)__builtin_popcountll(x); }
GPUIO_FN gpuio_u32 gpuio_warp_leader(gpuio_u64 m) { return (gpuio_u32)__builtin_ctzll(m); }
GPUIO_FN gpuio_u32 gpuio_warp_rank(gpuio_u64 m) {
  return __builtin_amdgcn_mbcnt_hi((gpuio_u32)(m >> 32), __builtin_amdgcn_mbcnt_lo((gpuio_u32)m, 0u));
}
GPUIO_FN gpuio_u32 gpuio_warp_count(gpuio_u64 m) { return (gpuio_u32)__builtin_popcountll(m); }
GPUIO_FN gpuio_u64 gpuio_warp_broadcast_64(gpuio_u64 m, gpuio_u64 v, gpuio_u32 lane) {
  (void)m; /* the lanes of a wavefront run in lockstep: no sync needed */
  const gpuio_u32 lo = (gpuio_u32)__builtin_amdgcn_readlane((int)(gpuio_u32)v, (int)lane);
  const gpuio_u32 hi = (gpuio_u32)__builtin_amdgcn_readlane((int)(gpuio_u32)(v >> 32), (int)lane);
  return ((gpuio_u64)hi << 32) | lo;
}
/* The lanes of a wavefront run in lockstep: a wave barrier keeps the compiler from
 * moving memory operations across it. */
GPUIO_FN void gpuio_warp_sync(gpuio_u64 m) {
  (void)m;
  __builtin_amdgcn_wave_barrier();
}
/* The lanes of `m` whose `pred` holds (read lane by lane: no builtin ballot is in
 * every clang that targets these GPUs). */
GPUIO_FN gpuio_u64 gpuio_warp_ballot(gpuio_u64 m, bool pred) {
  gpuio_u64 out = 0;
  for (gpuio_u64 rest = m; rest; rest &= rest - 1u) {
    const int lane = (int)__builtin_ctzll(rest);
    if (__builtin_amdgcn_readlane((int)pred, lane)) out |= 1ull << lane;
  }
  return out;
}
GPUIO_FN gpuio_u32 gpuio_warp_min_32(gpuio_u64 m, gpuio_u32 v) {
  gpuio_u32 least = v;
  for (gpuio_u64 rest = m; rest; rest &= rest - 1u) {
    const gpuio_u32 x = (gpuio_u32)__builtin_amdgcn_readlane((int)v, (int)__builtin_ctzll(rest));
    least = x < least ? x : least;
  }
  return least;
}

/* ------------------------------------------------------------- host C++ */
#else
#include <sched.h>
#include <time.h>
#define GPUIO_FN static inline
#define GPUIO_METHOD inline
#define GPUIO_NOINLINE static __attribute__((noinline))
#define GPUIO_UNROLL _Pragma("GCC unroll 8")
/* Exported even under -fvisibility=hidden: the CPU device builds kernel files loaded
 * at run time that way and finds their kernels by name (dlsym). */
#define GPUIO_KERNEL(name) extern "C" __attribute__((visibility("default"))) void name
#define GPUIO_WARP_SIZE 32u

/* The CPU device runs every emulated thread on an OS thread and tells it who it is
 * through this thread-local (defined by the CPU device runtime, device/cpu/). */
typedef struct gpuio_cpu_thread {
  gpuio_u64 global_id;
  gpuio_u64 thread_count;
  gpuio_u64 spins; /* spin-loop iterations since the last yield */
} gpuio_cpu_thread;
extern "C" thread_local gpuio_cpu_thread gpuio_cpu_self;

GPUIO_FN gpuio_u32 gpuio_ld_acquire_32(const gpuio_u32 *p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
GPUIO_FN gpuio_u64 gpuio_ld_acquire_64(const gpuio_u64 *p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
GPUIO_FN void gpuio_st_release_32(gpuio_u32 *p, gpuio_u32 v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }
GPUIO_FN void gpuio_st_release_64(gpuio_u64 *p, gpuio_u64 v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }
GPUIO_FN gpuio_u32 gpuio_ld_relaxed_32(const gpuio_u32 *p) { return __atomic_load_n(p, __ATOMIC_RELAXED); }
GPUIO_FN gpuio_u64 gpuio_ld_relaxed_64(const gpuio_u64 *p) { return __atomic_load_n(p, __ATOMIC_RELAXED); }
GPUIO_FN void gpuio_ld_relaxed_pair(const void *p, gpuio_u64 *a, gpuio_u64 *b) {
  *a = gpuio_ld_relaxed_64((const gpuio_u64 *)p);
  *b = gpuio_ld_relaxed_64((const gpuio_u64 *)p + 1);
}
GPUIO_FN void gpuio_ld_fixed_pair(const void *p, gpuio_u64 *a, gpuio_u64 *b) { gpuio_ld_relaxed_pair(p, a, b); }
GPUIO_FN void gpuio_st_relaxed_32(gpuio_u32 *p, gpuio_u32 v) { __atomic_store_n(p, v, __ATOMIC_RELAXED); }
GPUIO_FN void gpuio_st_relaxed_64(gpuio_u64 *p, gpuio_u64 v) { __atomic_store_n(p, v, __ATOMIC_RELAXED); }
GPUIO_FN void gpuio_fence_sc(void) { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
/* One scope on the host: the device-scope forms are the same operations. */
GPUIO_FN gpuio_u32 gpuio_ld_acquire_dev_32(const gpuio_u32 *p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
GPUIO_FN gpuio_u64 gpuio_ld_acquire_dev_64(const gpuio_u64 *p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
GPUIO_FN void gpuio_st_release_dev_32(gpuio_u32 *p, gpuio_u32 v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }
GPUIO_FN void gpuio_st_release_dev_64(gpuio_u64 *p, gpuio_u64 v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }
GPUIO_FN void gpuio_fence_dev(void) { __atomic_thread_fence(__ATOMIC_ACQ_REL); }
GPUIO_FN void gpuio_fence_sc_dev(void) { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
GPUIO_FN gpuio_u64 gpuio_fetch_add_64(gpuio_u64 *p, gpuio_u64 v) { return __atomic_fetch_add(p, v, __ATOMIC_ACQ_REL); }
GPUIO_FN gpuio_u32 gpuio_cas_32(gpuio_u32 *p, gpuio_u32 expect, gpuio_u32 desired) {
  __atomic_compare_exchange_n(p, &expect, desired, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
  return expect;
}
GPUIO_FN gpuio_u64 gpuio_cas_64(gpuio_u64 *p, gpuio_u64 expect, gpuio_u64 desired) {
  __atomic_compare_exchange_n(p, &expect, desired, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
  return expect;
}
/* gpuio_cas_64 already acquires (and releases). */
GPUIO_FN gpuio_u64 gpuio_cas_acquire_dev_64(gpuio_u64 *p, gpuio_u64 expect, gpuio_u64 desired) {
  return gpuio_cas_64(p, expect, desired);
}
GPUIO_FN void gpuio_and_release_dev_64(gpuio_u64 *p, gpuio_u64 v) { (void)__atomic_fetch_and(p, v, __ATOMIC_RELEASE); }
GPUIO_FN void gpuio_add_release_dev_64(gpuio_u64 *p, gpuio_u64 v) { (void)__atomic_fetch_add(p, v, __ATOMIC_RELEASE); }
GPUIO_FN void gpuio_add_dev_64(gpuio_u64 *p, gpuio_u64 v) { (void)__atomic_fetch_add(p, v, __ATOMIC_RELAXED); }
GPUIO_FN gpuio_u32 gpuio_xchg_32(gpuio_u32 *p, gpuio_u32 v) { return __atomic_exchange_n(p, v, __ATOMIC_ACQ_REL); }
GPUIO_FN gpuio_u64 gpuio_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (gpuio_u64)ts.tv_sec * 1000000000ull + (gpuio_u64)ts.tv_nsec;
}
/* Emulated threads outnumber cores: spin briefly, then give the core away so the
 * thread we wait for (or the host thread serving us) can run. */
GPUIO_FN void gpuio_pause(void) {
  if (++gpuio_cpu_self.spins >= 64) {
    gpuio_cpu_self.spins = 0;
    sched_yield();
  } else {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
  }
}
/* Emulated threads outnumber cores: a longer wait is a yield, like a short one. */
GPUIO_FN void gpuio_sleep_ns(gpuio_u32 ns) {
  (void)ns;
  gpuio_pause();
}
GPUIO_FN gpuio_u64 gpuio_global_thread_id(void) { return gpuio_cpu_self.global_id; }
GPUIO_FN gpuio_u64 gpuio_thread_count(void) { return gpuio_cpu_self.thread_count; }
GPUIO_FN gpuio_u32 gpuio_lane_id(void) { return (gpuio_u32)(gpuio_cpu_self.global_id % GPUIO_WARP_SIZE); }
GPUIO_FN gpuio_u64 gpuio_warp_id(void) { return gpuio_cpu_self.global_id / GPUIO_WARP_SIZE; }
GPUIO_FN gpuio_u32 gpuio_ctz_32(gpuio_u32 x) { return (gpuio_u32)__builtin_ctz(x); }
GPUIO_FN gpuio_u32 gpuio_popc_64(gpuio_u64 x) { return (gpuio_u32)__builtin_popcountll(x); }
#if defined(GPUIO_HOST_WARP)
/* A test that runs the lanes of a warp together on the host (fibers meeting at
 * every warp call: the warp-wide code of the header without a GPU,
 * device/tests/warp_lanes.cpp) defines GPUIO_HOST_WARP before including gpuio.h and
 * these after it. */
GPUIO_FN gpuio_u64 gpuio_warp_active(void);
GPUIO_FN gpuio_u32 gpuio_warp_leader(gpuio_u64 m);
GPUIO_FN gpuio_u32 gpuio_warp_rank(gpuio_u64 m);
GPUIO_FN gpuio_u32 gpuio_warp_count(gpuio_u64 m);
GPUIO_FN gpuio_u64 gpuio_warp_broadcast_64(gpuio_u64 m, gpuio_u64 v, gpuio_u32 lane);
GPUIO_FN gpuio_u32 gpuio_warp_min_32(gpuio_u64 m, gpuio_u32 v);
GPUIO_FN void gpuio_warp_sync(gpuio_u64 m);
GPUIO_FN gpuio_u64 gpuio_warp_ballot(gpuio_u64 m, bool pred);
#else
/* Every emulated thread runs on its own: a warp of one lane. */
GPUIO_FN gpuio_u64 gpuio_warp_active(void) { return 1u; }
GPUIO_FN gpuio_u32 gpuio_warp_leader(gpuio_u64 m) { return (void)m, 0u; }
GPUIO_FN gpuio_u32 gpuio_warp_rank(gpuio_u64 m) { return (void)m, 0u; }
GPUIO_FN gpuio_u32 gpuio_warp_count(gpuio_u64 m) { return (void)m, 1u; }
GPUIO_FN gpuio_u64 gpuio_warp_broadcast_64(gpuio_u64 m, gpuio_u64 v, gpuio_u32 lane) { return (void)m, (void)lane, v; }
GPUIO_FN gpuio_u32 gpuio_warp_min_32(gpuio_u64 m, gpuio_u32 v) { return (void)m, v; }
GPUIO_FN void gpuio_warp_sync(gpuio_u64 m) { (void)m; }
GPUIO_FN gpuio_u64 gpuio_warp_ballot(gpuio_u64 m, bool pred) { return pred ? m : 0u; }
#endif
#endif

#if defined(GPUIO_OUT_OF_LINE)
#define GPUIO_ENGINE GPUIO_NOINLINE
#else
#define GPUIO_ENGINE GPUIO_FN
#endif

/* Pointers in the descriptor are stored as integers (device addresses). */
template <typename T> GPUIO_FN T *gpuio_ptr(gpuio_u64 addr) { return (T *)(addr); }

#endif /* GPUIO_ARCH_H */
