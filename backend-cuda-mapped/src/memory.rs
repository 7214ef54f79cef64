//! CUDA memory: mapped pinned host memory (shared) and device memory (local).
//!
//! **Shared** memory is an anonymous, populated private mapping
//! ([`AnonMapping`]) page-locked and mapped for the GPU with
//! `cuMemHostRegister(DEVICEMAP | PORTABLE)`; its device address comes from
//! `cuMemHostGetDevicePointer` (equal to the host address on a machine with
//! unified addressing, but never assumed). It is ordinary cached memory: the host
//! polls it, so it is never write-combined.
//!
//! Registration is done in large chunks that the provider keeps and hands out in
//! page-aligned pieces ([`SharedPiece`]): `cuMemHostRegister` and
//! `cuMemHostUnregister` wait until no kernel runs on the device, so registering
//! per channel would make opening or dropping a channel wait for every kernel in
//! flight, a spinning one included (measured on the H100: a register + unregister
//! issued while a kernel spun returned only when the kernel did).
//!
//! io_uring `NO_MMAP`: the direct transport points the kernel at ring memory the
//! process allocated, and the kernel pins those pages (`pin_user_pages`).
//! [`no_mmap_ring_accepts`] asks the running kernel. On the reference machine
//! (H100, driver 580.159, Linux 6.18, 2026-11-23; `examples/cuda_check.rs`,
//! `docs/validation.md`) it accepted, for 8- and 256-entry rings, with and
//! without `SQPOLL`, all of: a plain anonymous mapping, the same mapping after
//! `cuMemHostRegister`, and `cuMemHostAlloc(DEVICEMAP | PORTABLE)` memory. The
//! registered anonymous mapping is the route taken: it is what `pin_user_pages` is
//! written for on any kernel, the driver's own mappings may not be pinnable on
//! others, and the process keeps control of the pages. [`HostAlloc`] is kept only
//! to repeat that comparison.
//!
//! **Local** memory is device memory (`cuMemAllocAsync` from the device's pool,
//! or `cuMemAlloc` where pools are missing), zeroed; the host reaches it only by
//! copies. Device atomics on contended words belong there: GPU atomics on mapped
//! host memory cross PCIe and are not reliable as host↔device synchronisation.
//! All of it is managed on one copy stream of the provider's, never on the
//! null stream, so no allocation, copy or free waits for a kernel that hangs
//! (measured: a pool alloc + free took 0.15 ms while a kernel spun).
//!
//! Every owner holds an `Arc` of the context, so the context outlives the memory,
//! and frees in `Drop` (binding the context to the dropping thread first). A
//! context lost to a kernel trap refuses every later call, `cuMemHostUnregister`
//! and `cuMemFree` included: then the registration is logged and abandoned (the
//! mapping is still unmapped; the driver drops its page pins when the context
//! goes) and device memory leaks until the context is destroyed.

use std::sync::{Arc, Mutex};

use cudarc::driver::{CudaContext, CudaStream};
use gpuio_core::memory::{AnonMapping, LocalMemory, MemoryError, SharedMemory, SharedRegion};
use gpuio_core::MemoryProvider;

use crate::sys::{self, Call, CudaError};

const PROVIDER: &str = "cuda-mapped";

fn mem_err(e: CudaError) -> MemoryError {
    MemoryError::Driver {
        provider: PROVIDER,
        call: e.call,
        message: format!("{}: {}", e.name, e.text),
    }
}

/// The CUDA memory provider of one context.
#[derive(Clone, Debug)]
pub struct CudaMemory {
    ctx: Arc<CudaContext>,
    /// Where device memory is allocated, filled, copied and freed; no kernel runs
    /// on it, so waiting for it never waits for a kernel.
    copies: Arc<CudaStream>,
    shared: Arc<Arena>,
}

impl CudaMemory {
    pub fn new(ctx: Arc<CudaContext>) -> Result<Self, CudaError> {
        sys::bind(&ctx)?;
        // SAFETY: this crate creates no CudaSlice, so cudarc's per-slice event
        // tracking has nothing to track; with it off, creating a stream never
        // synchronises the whole context (which would wait for a running kernel).
        unsafe { ctx.disable_event_tracking() };
        let copies = ctx.new_stream().call("cuStreamCreate")?;
        Ok(Self {
            shared: Arc::new(Arena {
                ctx: ctx.clone(),
                chunk: ARENA_CHUNK,
                chunks: Mutex::new(Vec::new()),
            }),
            ctx,
            copies,
        })
    }

    /// The stream device memory is managed on.
    pub fn copy_stream(&self) -> &Arc<CudaStream> {
        &self.copies
    }

    pub fn context(&self) -> &Arc<CudaContext> {
        &self.ctx
    }

    /// Bytes of host memory registered so far (the arena's chunks).
    pub fn registered_bytes(&self) -> usize {
        self.shared.registered_bytes()
    }
}

impl MemoryProvider for CudaMemory {
    fn name(&self) -> &'static str {
        PROVIDER
    }
    fn alloc_shared(&self, len: usize) -> Result<Box<dyn SharedMemory>, MemoryError> {
        Ok(Box::new(Arena::alloc(&self.shared, len)?))
    }
    fn alloc_local(&self, len: usize) -> Result<Box<dyn LocalMemory>, MemoryError> {
        Ok(Box::new(DeviceAlloc::zeroed(&self.copies, len)?))
    }
}

/// Registered memory is taken from the driver in chunks of this many bytes (or
/// one request's size, if larger).
pub const ARENA_CHUNK: usize = 128 << 20;

/// Registered host memory, handed out in page-aligned pieces.
///
/// `cuMemHostRegister` and `cuMemHostUnregister` wait until no kernel runs on the
/// device (measured on the H100: a register + unregister issued while a kernel
/// spun returned only when the kernel did, see `docs/validation.md`). A channel
/// opened or dropped while another channel's kernel runs, or while a timed-out
/// kernel is still spinning, would wait just as long. So registrations are made
/// in large chunks and kept until the provider and every piece are gone; opening
/// and closing channels then only takes and returns pieces, on the host. Only a
/// request the chunks cannot hold registers (and may wait).
#[derive(Debug)]
struct Arena {
    ctx: Arc<CudaContext>,
    chunk: usize,
    chunks: Mutex<Vec<Chunk>>,
}

/// How long a freed piece rests before it is handed out again.
///
/// io_uring frees a ring asynchronously after its fd is closed: until its SQPOLL
/// thread has let go, the kernel still reads and writes the pages the ring pinned
/// (`IORING_SETUP_NO_MMAP` rings live in this memory). Handing those pages to the
/// next channel at once let two rings share one SQ on the H100 (SQEs consumed
/// twice, more completions than submissions). A piece freed less than this long
/// ago is not reused.
const REUSE_AFTER: std::time::Duration = std::time::Duration::from_secs(3);

#[derive(Debug)]
struct Chunk {
    mem: RegisteredMapping,
    free: FreeList,
    /// Freed pieces `(when, offset, len)` waiting out [`REUSE_AFTER`].
    resting: Vec<(std::time::Instant, usize, usize)>,
}

impl Chunk {
    /// Returns to the free list every resting piece whose time is up.
    fn wake_rested(&mut self) {
        let now = std::time::Instant::now();
        let free = &mut self.free;
        self.resting.retain(|&(when, offset, len)| {
            if now.duration_since(when) >= REUSE_AFTER {
                free.give(offset, len);
                false
            } else {
                true
            }
        });
    }
}

/// Free `(offset, len)` ranges of one chunk: sorted, never adjacent (merged on
/// return), first fit.
#[derive(Debug, Default, PartialEq, Eq)]
struct FreeList(Vec<(usize, usize)>);

impl FreeList {
    fn whole(len: usize) -> Self {
        Self(vec![(0, len)])
    }

    fn take(&mut self, len: usize) -> Option<usize> {
        let i = self.0.iter().position(|&(_, l)| l >= len)?;
        let (off, l) = self.0[i];
        if l == len {
            self.0.remove(i);
        } else {
            self.0[i] = (off + len, l - len);
        }
        Some(off)
    }

    fn give(&mut self, off: usize, len: usize) {
        let r = &mut self.0;
        let i = r.partition_point(|&(o, _)| o < off);
        r.insert(i, (off, len));
        if i + 1 < r.len() && r[i].0 + r[i].1 == r[i + 1].0 {
            r[i].1 += r[i + 1].1;
            r.remove(i + 1);
        }
        if i > 0 && r[i - 1].0 + r[i - 1].1 == r[i].0 {
            r[i - 1].1 += r[i].1;
            r.remove(i);
        }
    }
}

impl Arena {
    fn alloc(arena: &Arc<Self>, len: usize) -> Result<SharedPiece, MemoryError> {
        let page = rustix::param::page_size();
        let len = len.max(1).div_ceil(page) * page;
        let mut chunks = arena.chunks.lock().unwrap_or_else(|e| e.into_inner());
        let found = chunks.iter_mut().enumerate().find_map(|(i, c)| {
            c.wake_rested();
            c.free.take(len).map(|off| (i, off))
        });
        let (index, offset) = match found {
            Some(f) => f,
            None => {
                let size = len.max(arena.chunk);
                tracing::debug!(size, "registering another chunk of host memory");
                let mem = RegisteredMapping::new(&arena.ctx, size)?;
                let size = mem.map.len();
                chunks.push(Chunk {
                    mem,
                    free: FreeList::whole(size),
                    resting: Vec::new(),
                });
                let i = chunks.len() - 1;
                let off = chunks[i].free.take(len).ok_or(MemoryError::OutOfRange {
                    offset: 0,
                    len,
                    region_len: size,
                })?;
                (i, off)
            }
        };
        let r = chunks[index].mem.region();
        drop(chunks);
        // SAFETY: `offset + len` lies inside chunk `index` (taken from its free list),
        // which lives as long as the arena this piece holds.
        let host = unsafe { r.host_ptr.as_ptr().add(offset) };
        // SAFETY: the range was free, so this piece is its only user; zeroing it keeps
        // the provider's promise of zeroed memory.
        unsafe { std::ptr::write_bytes(host, 0, len) };
        Ok(SharedPiece {
            arena: arena.clone(),
            index,
            offset,
            region: SharedRegion {
                host_ptr: std::ptr::NonNull::new(host).ok_or(MemoryError::OutOfRange {
                    offset,
                    len,
                    region_len: r.len,
                })?,
                device_addr: r.device_addr + offset as u64,
                len,
            },
        })
    }

    fn registered_bytes(&self) -> usize {
        let chunks = self.chunks.lock().unwrap_or_else(|e| e.into_inner());
        chunks.iter().map(|c| c.mem.map.len()).sum()
    }
}

/// A page-aligned piece of the provider's registered memory.
#[derive(Debug)]
pub struct SharedPiece {
    arena: Arc<Arena>,
    index: usize,
    offset: usize,
    region: SharedRegion,
}

impl SharedMemory for SharedPiece {
    fn region(&self) -> SharedRegion {
        self.region
    }
}

impl Drop for SharedPiece {
    fn drop(&mut self) {
        // The channel's keep-alive guarantees no kernel uses the piece any more.
        let mut chunks = self.arena.chunks.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(c) = chunks.get_mut(self.index) {
            c.resting
                .push((std::time::Instant::now(), self.offset, self.region.len));
        }
    }
}

/// An anonymous mapping registered with the driver as mapped pinned memory.
#[derive(Debug)]
pub struct RegisteredMapping {
    map: AnonMapping,
    device_addr: u64,
    ctx: Arc<CudaContext>,
}

impl RegisteredMapping {
    /// `len` bytes (whole pages), zeroed, page-locked and mapped for the device.
    pub fn new(ctx: &Arc<CudaContext>, len: usize) -> Result<Self, MemoryError> {
        let map = AnonMapping::new(len)?;
        sys::bind(ctx).map_err(mem_err)?;
        // SAFETY: a context is current (bound above); the mapping is ours and is
        // unregistered in Drop before `map` unmaps it.
        unsafe { sys::mem_host_register(map.as_ptr(), map.len(), sys::HOST_REGISTER_MAPPED) }
            .map_err(mem_err)?;
        // SAFETY: current context; the pointer was just registered as mapped.
        match unsafe { sys::mem_host_device_pointer(map.as_ptr()) } {
            Ok(device_addr) => Ok(Self {
                map,
                device_addr,
                ctx: ctx.clone(),
            }),
            Err(e) => {
                // SAFETY: registered above, no kernel has seen it.
                if let Err(u) = unsafe { sys::mem_host_unregister(map.as_ptr()) } {
                    tracing::error!(error = %u, "cannot undo a registration");
                }
                Err(mem_err(e))
            }
        }
    }
}

impl SharedMemory for RegisteredMapping {
    fn region(&self) -> SharedRegion {
        let mut r = self.map.region();
        r.device_addr = self.device_addr;
        r
    }
}

impl Drop for RegisteredMapping {
    fn drop(&mut self) {
        let undone = sys::bind(&self.ctx).and_then(|()| {
            // SAFETY: current context; registered in `new`; the channel's keep-alive
            // guarantees no kernel still runs on it when the last owner drops.
            unsafe { sys::mem_host_unregister(self.map.as_ptr()) }
        });
        if let Err(e) = undone {
            tracing::error!(error = %e, len = self.map.len(), "cuMemHostUnregister failed; unmapping anyway");
        }
        // `self.map` unmaps after this.
    }
}

/// Device memory, allocated, filled and freed on the provider's own copy stream.
///
/// Where the device has memory pools (every current GPU) it comes from
/// `cuMemAllocAsync` and goes back with `cuMemFreeAsync`: a plain `cuMemFree`
/// waits for the whole device to go idle, so one kernel that never ends would hang
/// every later free in the process. Copies go through the same stream and wait for
/// it alone, never for kernels on other streams.
#[derive(Debug)]
pub struct DeviceAlloc {
    dptr: u64,
    len: usize,
    pooled: bool,
    stream: Arc<CudaStream>,
}

impl DeviceAlloc {
    /// `len` bytes of device memory, zeroed, ready for any stream when this returns.
    pub fn zeroed(stream: &Arc<CudaStream>, len: usize) -> Result<Self, MemoryError> {
        let len = len.max(1);
        let ctx = stream.context();
        let pooled = ctx.has_async_alloc();
        let s = stream.cu_stream();
        sys::bind(ctx).map_err(mem_err)?;
        // SAFETY: a context is current; `s` is its live stream (held by `stream`);
        // the allocation is freed in Drop the matching way.
        let dptr = unsafe {
            if pooled {
                sys::mem_alloc_async(len, s)
            } else {
                sys::mem_alloc(len)
            }
        }
        .map_err(mem_err)?;
        let a = Self {
            dptr,
            len,
            pooled,
            stream: stream.clone(),
        };
        // SAFETY: current context; exactly the allocation just made; live stream.
        unsafe { sys::memset_d8_async(dptr, 0, len, s).and_then(|()| sys::stream_synchronize(s)) }
            .map_err(mem_err)?;
        Ok(a)
    }

    fn check(&self, offset: usize, len: usize) -> Result<(), MemoryError> {
        if offset.checked_add(len).is_some_and(|end| end <= self.len) {
            Ok(())
        } else {
            Err(MemoryError::OutOfRange {
                offset,
                len,
                region_len: self.len,
            })
        }
    }
}

impl LocalMemory for DeviceAlloc {
    fn device_addr(&self) -> u64 {
        self.dptr
    }
    fn len(&self) -> usize {
        self.len
    }
    fn write(&self, offset: usize, bytes: &[u8]) -> Result<(), MemoryError> {
        self.check(offset, bytes.len())?;
        let s = self.stream.cu_stream();
        sys::bind(self.stream.context()).map_err(mem_err)?;
        // SAFETY: current context; live stream; the range lies in this allocation
        // (checked); `bytes` outlives the synchronisation.
        unsafe {
            sys::memcpy_htod_async(self.dptr + offset as u64, bytes, s)
                .and_then(|()| sys::stream_synchronize(s))
        }
        .map_err(mem_err)
    }
    fn read(&self, offset: usize, buf: &mut [u8]) -> Result<(), MemoryError> {
        self.check(offset, buf.len())?;
        let s = self.stream.cu_stream();
        sys::bind(self.stream.context()).map_err(mem_err)?;
        // SAFETY: current context; live stream; the range lies in this allocation
        // (checked); `buf` is not read before the synchronisation.
        unsafe {
            sys::memcpy_dtoh_async(buf, self.dptr + offset as u64, s)
                .and_then(|()| sys::stream_synchronize(s))
        }
        .map_err(mem_err)
    }
    fn store_u32(&self, offset: usize, value: u32) -> Result<(), MemoryError> {
        if !offset.is_multiple_of(4) {
            return Err(MemoryError::OutOfRange {
                offset,
                len: 4,
                region_len: self.len,
            });
        }
        // One aligned 4-byte copy on the provider's copy stream, which waits for no
        // kernel: a running kernel sees the word change while it runs.
        self.write(offset, &value.to_le_bytes())
    }
}

impl Drop for DeviceAlloc {
    fn drop(&mut self) {
        let s = self.stream.cu_stream();
        let freed = sys::bind(self.stream.context()).and_then(|()| {
            // SAFETY: current context; live stream; allocated in `zeroed` the same
            // way, freed once; no kernel uses it once its last owner drops (launches
            // hold their owners until the kernel is seen to end).
            unsafe {
                if self.pooled {
                    sys::mem_free_async(self.dptr, s)
                } else {
                    sys::mem_free(self.dptr)
                }
            }
        });
        if let Err(e) = freed {
            tracing::error!(error = %e, len = self.len, "freeing device memory failed; leaking it");
        }
    }
}

/// Mapped pinned memory allocated by the driver (`cuMemHostAlloc(DEVICEMAP |
/// PORTABLE)`, never write-combined). Not used by [`CudaMemory`]: kept to compare
/// with [`RegisteredMapping`] as io_uring `NO_MMAP` ring memory.
#[derive(Debug)]
pub struct HostAlloc {
    ptr: std::ptr::NonNull<u8>,
    device_addr: u64,
    len: usize,
    ctx: Arc<CudaContext>,
}

// SAFETY: the allocation is plain memory owned by this value; access is
// synchronised by whoever uses the region.
unsafe impl Send for HostAlloc {}
// SAFETY: as above.
unsafe impl Sync for HostAlloc {}

impl HostAlloc {
    /// `len` bytes (rounded up to whole pages), zeroed.
    pub fn new(ctx: &Arc<CudaContext>, len: usize) -> Result<Self, MemoryError> {
        let page = rustix::param::page_size();
        let len = len.max(1).div_ceil(page) * page;
        sys::bind(ctx).map_err(mem_err)?;
        // SAFETY: current context; freed in Drop with cuMemFreeHost.
        let p = unsafe { sys::mem_host_alloc(len, sys::HOST_ALLOC_MAPPED) }.map_err(mem_err)?;
        let ptr = std::ptr::NonNull::new(p).ok_or(MemoryError::Driver {
            provider: PROVIDER,
            call: "cuMemHostAlloc",
            message: "returned null".into(),
        })?;
        let mut out = Self {
            ptr,
            device_addr: 0,
            len,
            ctx: ctx.clone(),
        };
        // SAFETY: `len` bytes at `ptr` were just allocated for us.
        unsafe { std::ptr::write_bytes(ptr.as_ptr(), 0, len) };
        // SAFETY: current context; allocated as mapped above.
        out.device_addr = unsafe { sys::mem_host_device_pointer(ptr.as_ptr()) }.map_err(mem_err)?;
        Ok(out)
    }
}

impl SharedMemory for HostAlloc {
    fn region(&self) -> SharedRegion {
        SharedRegion {
            host_ptr: self.ptr,
            device_addr: self.device_addr,
            len: self.len,
        }
    }
}

impl Drop for HostAlloc {
    fn drop(&mut self) {
        let freed = sys::bind(&self.ctx).and_then(|()| {
            // SAFETY: current context; allocated in `new` and freed once.
            unsafe { sys::mem_free_host(self.ptr.as_ptr()) }
        });
        if let Err(e) = freed {
            tracing::error!(error = %e, len = self.len, "cuMemFreeHost failed; leaking");
        }
    }
}

/// Page-locked host memory for copies (`cuMemHostAlloc` with no flags, what
/// `cudaMallocHost` gives): the memory `cuMemcpy` runs fastest from, used to
/// measure the ceiling of host↔device copies. Freeing it waits for running kernels
/// (see [`crate::device`]): not for paths a running program takes.
#[derive(Debug)]
pub struct PinnedBuffer {
    ptr: std::ptr::NonNull<u8>,
    len: usize,
    ctx: Arc<CudaContext>,
}

// SAFETY: the allocation is plain memory owned by this value; `&mut self` guards
// writes through it.
unsafe impl Send for PinnedBuffer {}
// SAFETY: as above; shared access only reads.
unsafe impl Sync for PinnedBuffer {}

impl PinnedBuffer {
    /// `len` bytes (at least one), filled with `fill`.
    pub fn new(ctx: &Arc<CudaContext>, len: usize, fill: u8) -> Result<Self, MemoryError> {
        let len = len.max(1);
        sys::bind(ctx).map_err(mem_err)?;
        // SAFETY: current context; freed in Drop with cuMemFreeHost.
        let p = unsafe { sys::mem_host_alloc(len, sys::HOST_ALLOC_PINNED) }.map_err(mem_err)?;
        let ptr = std::ptr::NonNull::new(p).ok_or(MemoryError::Driver {
            provider: PROVIDER,
            call: "cuMemHostAlloc",
            message: "returned null".into(),
        })?;
        // SAFETY: `len` bytes at `ptr` were just allocated for us.
        unsafe { std::ptr::write_bytes(ptr.as_ptr(), fill, len) };
        Ok(Self {
            ptr,
            len,
            ctx: ctx.clone(),
        })
    }

    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: `len` initialised bytes owned by `self`, alive as long as it.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }

    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: as in `as_slice`; `&mut self` makes this the only view.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl Drop for PinnedBuffer {
    fn drop(&mut self) {
        let freed = sys::bind(&self.ctx).and_then(|()| {
            // SAFETY: current context; allocated in `new` and freed once; only
            // copies that have been synchronised ever used it.
            unsafe { sys::mem_free_host(self.ptr.as_ptr()) }
        });
        if let Err(e) = freed {
            tracing::error!(error = %e, len = self.len, "cuMemFreeHost failed; leaking");
        }
    }
}

/// Asks the running kernel whether it accepts `mem` as the memory of an io_uring
/// created with `IORING_SETUP_NO_MMAP` (plus `SQPOLL` when `sqpoll`), `entries`
/// deep: the SQEs in the first half of the region, the rings in the second half.
/// Ok means the kernel pinned the pages; the ring is closed again at once.
pub fn no_mmap_ring_accepts(
    mem: &dyn SharedMemory,
    entries: u32,
    sqpoll: bool,
) -> Result<(), std::io::Error> {
    use rustix::io_uring::{io_uring_params, io_uring_ptr, io_uring_setup, IoringSetupFlags};
    let r = mem.region();
    let page = rustix::param::page_size();
    let half = (r.len / 2) / page * page;
    let sqes_len = entries as usize * 64;
    // Rings: headers, the SQ index array and 2 × entries CQEs of 16 bytes, rounded up
    // generously; the kernel says EINVAL/EFAULT if it needs more than we gave.
    let rings_len = 4096 + entries as usize * (4 + 2 * 16);
    if half == 0 || sqes_len > half || rings_len > r.len - half {
        return Err(std::io::Error::other(format!(
            "a {} byte region is too small for a {entries}-entry ring",
            r.len
        )));
    }
    let mut p = io_uring_params::default();
    p.flags = IoringSetupFlags::NO_MMAP;
    if sqpoll {
        p.flags |= IoringSetupFlags::SQPOLL;
        p.sq_thread_idle = 10;
    }
    p.sq_off.user_addr = io_uring_ptr::new(r.host_ptr.as_ptr().cast());
    // SAFETY: `half` is inside the region (checked above).
    p.cq_off.user_addr = io_uring_ptr::new(unsafe { r.host_ptr.as_ptr().add(half) }.cast());
    // SAFETY: no ATTACH_WQ, so no fd in the params must be valid; the user
    // addresses point into memory `mem` keeps alive for the whole call, and the
    // ring (an OwnedFd) is closed before this function returns.
    let fd = unsafe { io_uring_setup(entries, &mut p) }?;
    drop(fd);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::FreeList;

    #[test]
    fn free_list_hands_out_first_fit_and_merges_returned_neighbours() {
        let mut f = FreeList::whole(10);
        assert_eq!(f.take(3), Some(0));
        assert_eq!(f.take(3), Some(3));
        assert_eq!(f.take(3), Some(6));
        assert_eq!(f.take(2), None, "only 1 left");
        f.give(3, 3);
        assert_eq!(f, FreeList(vec![(3, 3), (9, 1)]));
        f.give(0, 3);
        assert_eq!(
            f,
            FreeList(vec![(0, 6), (9, 1)]),
            "merged with the right neighbour"
        );
        f.give(6, 3);
        assert_eq!(f, FreeList::whole(10), "merged on both sides");
        assert_eq!(f.take(10), Some(0));
        assert_eq!(f, FreeList::default());
    }
}
