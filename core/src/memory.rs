//! Shared memory: bytes both the host and a device can address.
//!
//! A [`MemoryProvider`] hands out two kinds of memory:
//! * **shared** — host-visible and device-mapped, for everything one side publishes
//!   and the other observes (rings, staging, the descriptor). The host polls it, so
//!   it must be cached host memory, never write-combined.
//! * **device-local** — state only the device's own atomics touch (reservation
//!   counters, locks, per-slot state). On a GPU it lives in device memory, where
//!   atomics are fast; on the CPU device it is ordinary memory.
//!
//! Every transport is written against this trait, so one transport serves every
//! device: plain host memory (the CPU device), CUDA mapped pinned memory, HSA
//! fine-grained memory.

use std::fmt;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU32, AtomicU64};
use std::sync::{Arc, Mutex};

/// Why memory could not be had.
#[derive(Debug, thiserror::Error)]
pub enum MemoryError {
    #[error("{call} failed: {source}")]
    Os {
        call: &'static str,
        #[source]
        source: std::io::Error,
    },
    #[error("{provider}: {call} failed: {message}")]
    Driver {
        provider: &'static str,
        call: &'static str,
        message: String,
    },
    #[error("access at {offset}+{len} is outside a region of {region_len} bytes")]
    OutOfRange {
        offset: usize,
        len: usize,
        region_len: usize,
    },
}

/// A span of shared memory, as both sides name it.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct SharedRegion {
    /// Where the host reads and writes it.
    pub host_ptr: NonNull<u8>,
    /// Where the device reads and writes it (equal to `host_ptr` on the CPU device
    /// and on CUDA with unified addressing).
    pub device_addr: u64,
    pub len: usize,
}

impl fmt::Debug for SharedRegion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "SharedRegion {{ host: {:p}, device: {:#x}, len: {} }}",
            self.host_ptr, self.device_addr, self.len
        )
    }
}

// SAFETY: a SharedRegion is only an address range; every access through it goes through
// atomics or through the accessors below, whose callers own the synchronisation.
unsafe impl Send for SharedRegion {}
// SAFETY: as above.
unsafe impl Sync for SharedRegion {}

/// One allocation of shared memory; dropping it frees the memory.
pub trait SharedMemory: Send + Sync + fmt::Debug {
    fn region(&self) -> SharedRegion;
}

/// One allocation of device-local memory; dropping it frees the memory.
pub trait LocalMemory: Send + Sync + fmt::Debug {
    fn device_addr(&self) -> u64;
    fn len(&self) -> usize;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Copies `bytes` to `offset` (the host cannot dereference device memory).
    fn write(&self, offset: usize, bytes: &[u8]) -> Result<(), MemoryError>;
    /// Copies `buf.len()` bytes from `offset`.
    fn read(&self, offset: usize, buf: &mut [u8]) -> Result<(), MemoryError>;
    /// Stores `value` at `offset` (a multiple of 4) while a kernel may be reading
    /// that word: it sees the old value or the new one (the channel's `closing`).
    /// Once this returns, the word is stored where the device's loads read it, and
    /// before anything a later [`read`](Self::read) of this memory reads: the direct
    /// transport's close handshake rests on that order (`crate::direct`'s module doc).
    fn store_u32(&self, offset: usize, value: u32) -> Result<(), MemoryError>;
}

/// Where a device's shared and device-local memory comes from.
pub trait MemoryProvider: Send + Sync + fmt::Debug {
    /// Short name for logs and reports ("host", "cuda-mapped", "hsa-fine-grained").
    fn name(&self) -> &'static str;
    /// Zeroed, page-aligned shared memory of at least `len` bytes.
    fn alloc_shared(&self, len: usize) -> Result<Box<dyn SharedMemory>, MemoryError>;
    /// Zeroed device-local memory of at least `len` bytes.
    fn alloc_local(&self, len: usize) -> Result<Box<dyn LocalMemory>, MemoryError>;
}

impl SharedRegion {
    /// The address of `offset`, if `len` bytes from there lie within the region and
    /// `offset` is a multiple of `align`.
    fn at(&self, offset: usize, len: usize, align: usize) -> Result<*mut u8, MemoryError> {
        let fits = offset.checked_add(len).is_some_and(|end| end <= self.len);
        if !fits || !offset.is_multiple_of(align) {
            return Err(MemoryError::OutOfRange {
                offset,
                len,
                region_len: self.len,
            });
        }
        // SAFETY: `offset + len <= self.len` (checked above), so the result stays
        // within the region's allocation.
        Ok(unsafe { self.host_ptr.as_ptr().add(offset) })
    }

    /// The `u32` at `offset` as an atomic both sides may touch, borrowed for as long
    /// as the caller keeps the region's memory alive (`'a`).
    fn atomic_u32<'a>(&self, offset: usize) -> Result<&'a AtomicU32, MemoryError> {
        let p = self.at(offset, 4, 4)?;
        // SAFETY: in range and aligned (`at`); the callers tie `'a` to the owner of
        // the memory, and AtomicU32 has the layout of u32. Concurrent device access
        // is what the atomic is for.
        Ok(unsafe { &*(p as *const AtomicU32) })
    }

    /// The `u64` at `offset`, as [`SharedRegion::atomic_u32`].
    fn atomic_u64<'a>(&self, offset: usize) -> Result<&'a AtomicU64, MemoryError> {
        let p = self.at(offset, 8, 8)?;
        // SAFETY: as in `atomic_u32`.
        Ok(unsafe { &*(p as *const AtomicU64) })
    }

    fn write_bytes(&self, offset: usize, bytes: &[u8]) -> Result<(), MemoryError> {
        let p = self.at(offset, bytes.len(), 1)?;
        // SAFETY: in range (`at`); the destination is shared memory that no Rust
        // reference aliases; racing device writes are excluded by the caller.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), p, bytes.len()) };
        Ok(())
    }

    fn read_bytes(&self, offset: usize, buf: &mut [u8]) -> Result<(), MemoryError> {
        let p = self.at(offset, buf.len(), 1)?;
        // SAFETY: in range (`at`); `buf` is a distinct Rust allocation.
        unsafe { std::ptr::copy_nonoverlapping(p, buf.as_mut_ptr(), buf.len()) };
        Ok(())
    }
}

impl dyn SharedMemory {
    /// The `u32` at `offset` as an atomic both sides may touch.
    pub fn atomic_u32(&self, offset: usize) -> Result<&AtomicU32, MemoryError> {
        self.region().atomic_u32(offset)
    }

    /// The `u64` at `offset` as an atomic both sides may touch.
    pub fn atomic_u64(&self, offset: usize) -> Result<&AtomicU64, MemoryError> {
        self.region().atomic_u64(offset)
    }

    /// Copies `bytes` into the region at `offset`. The caller makes sure the device
    /// is not using those bytes (e.g. before the descriptor is handed out).
    pub fn write_bytes(&self, offset: usize, bytes: &[u8]) -> Result<(), MemoryError> {
        self.region().write_bytes(offset, bytes)
    }

    /// Copies `buf.len()` bytes out of the region at `offset`. Concurrent device
    /// writes to those bytes make the copy's content unspecified, never unsound
    /// (plain bytes, no invariants).
    pub fn read_bytes(&self, offset: usize, buf: &mut [u8]) -> Result<(), MemoryError> {
        self.region().read_bytes(offset, buf)
    }
}

/// A shared allocation with its region looked up once: the accessors of `dyn
/// SharedMemory`, bounds-checked the same way, without a dynamic call to `region()`
/// per access. For the host's hot loops over queue rings (a `Sender` spent a fifth
/// of its time in `region()`).
#[derive(Clone, Debug)]
pub(crate) struct SharedView {
    /// Keeps the memory alive for the references handed out.
    _mem: Arc<dyn SharedMemory>,
    region: SharedRegion,
}

impl SharedView {
    pub fn new(mem: Arc<dyn SharedMemory>) -> Self {
        let region = mem.region();
        Self { _mem: mem, region }
    }

    pub fn region(&self) -> SharedRegion {
        self.region
    }

    /// As [`dyn SharedMemory::atomic_u32`](SharedMemory).
    pub fn atomic_u32(&self, offset: usize) -> Result<&AtomicU32, MemoryError> {
        self.region.atomic_u32(offset)
    }

    /// As [`dyn SharedMemory::atomic_u64`](SharedMemory).
    pub fn atomic_u64(&self, offset: usize) -> Result<&AtomicU64, MemoryError> {
        self.region.atomic_u64(offset)
    }

    /// As [`dyn SharedMemory::write_bytes`](SharedMemory).
    pub fn write_bytes(&self, offset: usize, bytes: &[u8]) -> Result<(), MemoryError> {
        self.region.write_bytes(offset, bytes)
    }

    /// As [`dyn SharedMemory::read_bytes`](SharedMemory).
    pub fn read_bytes(&self, offset: usize, buf: &mut [u8]) -> Result<(), MemoryError> {
        self.region.read_bytes(offset, buf)
    }
}

/// An anonymous, populated, page-aligned private mapping. The building block of the
/// host provider and of the CUDA provider (which registers it with the driver).
#[derive(Debug)]
pub struct AnonMapping {
    ptr: NonNull<u8>,
    len: usize,
}

// SAFETY: the mapping is plain memory owned by this value; access is synchronised
// by the protocols built on it.
unsafe impl Send for AnonMapping {}
// SAFETY: as above.
unsafe impl Sync for AnonMapping {}

impl AnonMapping {
    /// Maps `len` bytes (rounded up to whole pages), zeroed and populated.
    pub fn new(len: usize) -> Result<Self, MemoryError> {
        let page = rustix::param::page_size();
        let len = len.max(1).div_ceil(page) * page;
        // SAFETY: a fresh anonymous mapping at an address the kernel picks; it aliases
        // nothing.
        let ptr = unsafe {
            rustix::mm::mmap_anonymous(
                std::ptr::null_mut(),
                len,
                rustix::mm::ProtFlags::READ | rustix::mm::ProtFlags::WRITE,
                rustix::mm::MapFlags::PRIVATE | rustix::mm::MapFlags::POPULATE,
            )
        }
        .map_err(|e| MemoryError::Os {
            call: "mmap",
            source: e.into(),
        })?;
        let ptr = NonNull::new(ptr.cast::<u8>()).ok_or(MemoryError::Os {
            call: "mmap",
            source: std::io::Error::other("returned null"),
        })?;
        Ok(Self { ptr, len })
    }

    pub fn as_ptr(&self) -> *mut u8 {
        self.ptr.as_ptr()
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl Drop for AnonMapping {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly the mapping `new` created; nothing borrows it past
        // the owner's lifetime.
        if let Err(e) = unsafe { rustix::mm::munmap(self.ptr.as_ptr().cast(), self.len) } {
            tracing::error!(error = %e, "munmap failed");
        }
    }
}

/// Plain host memory: the CPU device's provider. Device addresses equal host ones.
#[derive(Debug, Default, Clone, Copy)]
pub struct HostMemory;

impl SharedMemory for AnonMapping {
    fn region(&self) -> SharedRegion {
        SharedRegion {
            host_ptr: self.ptr,
            device_addr: self.ptr.as_ptr() as u64,
            len: self.len,
        }
    }
}

impl LocalMemory for AnonMapping {
    fn device_addr(&self) -> u64 {
        self.ptr.as_ptr() as u64
    }
    fn len(&self) -> usize {
        self.len
    }
    fn write(&self, offset: usize, bytes: &[u8]) -> Result<(), MemoryError> {
        (self as &dyn SharedMemory).write_bytes(offset, bytes)
    }
    fn read(&self, offset: usize, buf: &mut [u8]) -> Result<(), MemoryError> {
        (self as &dyn SharedMemory).read_bytes(offset, buf)
    }
    fn store_u32(&self, offset: usize, value: u32) -> Result<(), MemoryError> {
        // Host memory the CPU device's threads load atomically: an atomic store.
        (self as &dyn SharedMemory)
            .atomic_u32(offset)?
            .store(value, std::sync::atomic::Ordering::Release);
        Ok(())
    }
}

impl MemoryProvider for HostMemory {
    fn name(&self) -> &'static str {
        "host"
    }
    fn alloc_shared(&self, len: usize) -> Result<Box<dyn SharedMemory>, MemoryError> {
        Ok(Box::new(AnonMapping::new(len)?))
    }
    fn alloc_local(&self, len: usize) -> Result<Box<dyn LocalMemory>, MemoryError> {
        Ok(Box::new(AnonMapping::new(len)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_memory_is_zeroed_page_aligned_and_addressed_alike() {
        let m = HostMemory.alloc_shared(100).unwrap();
        let r = m.region();
        assert_eq!(r.host_ptr.as_ptr() as u64, r.device_addr);
        assert_eq!(r.device_addr % rustix::param::page_size() as u64, 0);
        assert!(r.len >= 100);
        let mut buf = vec![1u8; r.len];
        m.read_bytes(0, &mut buf).unwrap();
        assert!(buf.iter().all(|&b| b == 0));
    }

    #[test]
    fn out_of_range_access_is_refused() {
        let m = HostMemory.alloc_shared(4096).unwrap();
        assert!(matches!(
            m.atomic_u32(4096),
            Err(MemoryError::OutOfRange { .. })
        ));
        assert!(m.atomic_u64(3).is_err(), "misaligned");
        assert!(m.write_bytes(4090, &[0; 8]).is_err());
    }
}

/// Every allocation of one channel. Kernels launched on the channel hold an `Arc`
/// to it, so nothing is freed while a kernel may still touch it.
#[derive(Debug, Default)]
pub struct ChannelMemory {
    shared: Mutex<Vec<Arc<dyn SharedMemory>>>,
    local: Mutex<Vec<Arc<dyn LocalMemory>>>,
}

impl ChannelMemory {
    pub(crate) fn keep_shared(&self, m: Arc<dyn SharedMemory>) {
        self.shared
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(m);
    }
    pub(crate) fn keep_local(&self, m: Arc<dyn LocalMemory>) {
        self.local.lock().unwrap_or_else(|e| e.into_inner()).push(m);
    }
}

/// Keeps a channel's memory alive (see [`Channel::keepalive`](crate::Channel::keepalive)).
#[derive(Clone, Debug)]
pub struct KeepAlive(#[allow(dead_code)] pub(crate) Arc<ChannelMemory>);
