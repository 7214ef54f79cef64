//! What io_uring allows on this machine: set-up at all, SQPOLL, `NO_MMAP`,
//! `R_DISABLED` + restrictions, `ENABLE_RINGS`, fixed buffers on a provider's memory.
//!
//! [`UringProbe::detect`] asks the kernel each question with a small throw-away ring
//! (closed again at once) and keeps the answers as data: every fact is `Ok(())` or a
//! [`Refusal`] naming the call and the errno. Backends turn the facts into
//! [`Availability`] per transport with [`UringProbe::direct`], [`UringProbe::forward`]
//! and [`UringProbe::mailbox`]; the reasons say what a person can do about it.
//!
//! # Testing seam: `GPUIO_PROBE_FAKE`
//!
//! Some answers cannot be had on demand (a kernel without `NO_MMAP`, say). The
//! environment variable `GPUIO_PROBE_FAKE` — read by this module only, and meant for
//! tests — overrides single facts with a refusal after the real probe ran. It is a
//! comma-separated list of `<fact>=<ERRNO>` (`no_mmap=EINVAL`) or `<fact>_unsupported`
//! (the kernel's answer to an unknown flag, `EINVAL`), where `<fact>` is one of
//! `setup`, `sqpoll`, `no_mmap`, `restrictions`, `enable_rings`, `fixed_buffers`.
//! Faked refusals say so wherever they are shown. [`UringProbe::detect_with`] takes
//! the overrides directly.
//!
//! # Locked memory
//!
//! io_uring charges a ring's pages and every buffer registered on it to the user's
//! locked memory, held against `RLIMIT_MEMLOCK`, unless the process has
//! `CAP_IPC_LOCK`. A direct channel registers its whole staging area (17 MiB by
//! default), so [`Memlock`] compares the limit with what a channel of the default
//! [`ChannelConfig`] pins, and [`UringProbe::direct`] refuses the transport, with
//! the numbers, where it cannot fit: the probe says "available" only where `open`
//! with the default configuration will then succeed.
//!
//! The probe leaves nothing charged that it can release itself: it unregisters its
//! fixed buffer before closing that ring (unregistering uncharges at once). Closing
//! a ring does not: the kernel frees a closed ring, and uncharges its pages, in a
//! worker moments later (about a millisecond on Linux 6.18). A ring set up right
//! after the probe under a limit with no room to spare may therefore meet `ENOMEM`
//! for that moment; the transports retry such a set-up briefly
//! ([`crate::uring::retry_transient`]).

use std::ffi::c_void;
use std::fmt;

use rustix::fd::OwnedFd;
/// The errno type of every [`Refusal`] (re-exported so callers need no rustix).
pub use rustix::io::Errno;
use rustix::io_uring::{
    io_uring_params, io_uring_ptr, io_uring_register, io_uring_restriction, io_uring_setup, iovec,
    IoringOp, IoringRegisterOp, IoringRestrictionOp, IoringSetupFlags, IoringSqeFlags,
};

use crate::backend::Availability;
use crate::channel::ChannelConfig;
use crate::memory::{AnonMapping, MemoryError, MemoryProvider};

/// The environment variable of the testing seam (see the module doc).
pub const FAKE_ENV: &str = "GPUIO_PROBE_FAKE";

/// Where the kernel says whether io_uring is switched off (Linux 6.6+).
pub const DISABLED_SYSCTL: &str = "/proc/sys/kernel/io_uring_disabled";

/// Entries of the probe rings: small enough that every ring part fits in one page.
const PROBE_ENTRIES: u32 = 8;

/// Why a fact does not hold: which call failed, and how.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    /// The call that failed, with the flags that matter (`io_uring_setup(SQPOLL)`).
    pub call: &'static str,
    /// The errno it failed with, where there is one.
    pub errno: Option<Errno>,
    /// More words, where the errno alone does not say it (a driver's message).
    pub detail: String,
    /// Set when the refusal came from `GPUIO_PROBE_FAKE`, not from the kernel.
    pub faked: bool,
}

impl Refusal {
    fn os(call: &'static str, errno: Errno) -> Self {
        Self {
            call,
            errno: Some(errno),
            detail: String::new(),
            faked: false,
        }
    }

    fn memory(call: &'static str, e: &MemoryError) -> Self {
        let errno = match e {
            MemoryError::Os { source, .. } => source.raw_os_error().map(Errno::from_raw_os_error),
            _ => None,
        };
        Self {
            call,
            errno,
            detail: e.to_string(),
            faked: false,
        }
    }

    /// The errno's symbolic name (`EPERM`), or `errno N`, or `-` without one.
    pub fn errno_name(&self) -> String {
        self.errno.map_or_else(|| "-".to_string(), errno_name)
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: ", self.call)?;
        match (self.errno, self.detail.is_empty()) {
            (Some(e), true) => write!(f, "{}", errno_name(e))?,
            (Some(e), false) => write!(f, "{} ({})", errno_name(e), self.detail)?,
            (None, _) => write!(f, "{}", self.detail)?,
        }
        if self.faked {
            write!(f, " [faked by {FAKE_ENV}]")?;
        }
        Ok(())
    }
}

/// One answer of the probe.
pub type Fact = Result<(), Refusal>;

/// The facts a probe establishes, by name (for [`Fakes`] and reports).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FactName {
    Setup,
    Sqpoll,
    NoMmap,
    Restrictions,
    EnableRings,
    FixedBuffers,
}

impl FactName {
    pub const ALL: [FactName; 6] = [
        Self::Setup,
        Self::Sqpoll,
        Self::NoMmap,
        Self::Restrictions,
        Self::EnableRings,
        Self::FixedBuffers,
    ];

    /// The name used in `GPUIO_PROBE_FAKE` and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Self::Setup => "setup",
            Self::Sqpoll => "sqpoll",
            Self::NoMmap => "no_mmap",
            Self::Restrictions => "restrictions",
            Self::EnableRings => "enable_rings",
            Self::FixedBuffers => "fixed_buffers",
        }
    }

    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|f| f.name() == name)
    }

    /// The call a faked refusal of this fact names.
    fn call(self) -> &'static str {
        match self {
            Self::Setup => "io_uring_setup",
            Self::Sqpoll => "io_uring_setup(SQPOLL)",
            Self::NoMmap => "io_uring_setup(NO_MMAP)",
            Self::Restrictions => "io_uring_register(RESTRICTIONS)",
            Self::EnableRings => "io_uring_register(ENABLE_RINGS)",
            Self::FixedBuffers => "io_uring_register(BUFFERS)",
        }
    }
}

/// A `GPUIO_PROBE_FAKE` value that could not be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{FAKE_ENV}={spec:?}: {why} (expected a comma-separated list of <fact>=<ERRNO> or <fact>_unsupported, facts: setup, sqpoll, no_mmap, restrictions, enable_rings, fixed_buffers)")]
pub struct FakeSpecError {
    pub spec: String,
    pub why: String,
}

/// Facts to report as refused whatever the kernel said (the testing seam).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Fakes(Vec<(FactName, Errno)>);

impl Fakes {
    /// No overrides.
    pub fn none() -> Self {
        Self::default()
    }

    /// Refuse `fact` with `errno`.
    pub fn refuse(mut self, fact: FactName, errno: Errno) -> Self {
        self.0.push((fact, errno));
        self
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Parses `no_mmap=EINVAL,sqpoll_unsupported`.
    pub fn parse(spec: &str) -> Result<Self, FakeSpecError> {
        let bad = |why: String| FakeSpecError {
            spec: spec.to_string(),
            why,
        };
        let mut fakes = Self::default();
        for token in spec.split(',').map(str::trim).filter(|t| !t.is_empty()) {
            let (fact, errno) = match token.split_once('=') {
                Some((fact, errno)) => {
                    let errno = errno_from_name(errno.trim())
                        .ok_or_else(|| bad(format!("unknown errno {errno:?}")))?;
                    (fact.trim(), errno)
                }
                None => match token.strip_suffix("_unsupported") {
                    Some(fact) => (fact, Errno::INVAL),
                    None => {
                        return Err(bad(format!(
                            "{token:?} has neither =ERRNO nor _unsupported"
                        )))
                    }
                },
            };
            let fact =
                FactName::from_name(fact).ok_or_else(|| bad(format!("unknown fact {fact:?}")))?;
            fakes.0.push((fact, errno));
        }
        Ok(fakes)
    }

    /// The overrides in `GPUIO_PROBE_FAKE` (none when it is unset or empty).
    pub fn from_env() -> Result<Self, FakeSpecError> {
        match std::env::var(FAKE_ENV) {
            Ok(spec) => Self::parse(&spec),
            Err(_) => Ok(Self::default()),
        }
    }
}

/// Whether `RLIMIT_MEMLOCK` leaves room for what a direct channel pins (see the
/// module doc): its staging area, registered as an io_uring fixed buffer, and its
/// ring memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Memlock {
    /// The soft limit in bytes; `None` is `RLIM_INFINITY`.
    pub limit: Option<u64>,
    /// Whether the calling thread has `CAP_IPC_LOCK` in its effective set: io_uring
    /// then charges nothing to the limit. (In a user namespace the capability must
    /// hold in the initial namespace; a container's own `CAP_IPC_LOCK` may not, and
    /// `open` then still fails with `ENOMEM`.)
    pub cap_ipc_lock: bool,
    /// Bytes the channel pins ([`crate::direct::pinned_bytes`]).
    pub need: u64,
}

impl Memlock {
    /// The limit and capability of the calling thread, against what a direct channel
    /// of `config` pins.
    pub fn detect(config: &ChannelConfig) -> Self {
        Self::detect_need(crate::direct::pinned_bytes(config))
    }

    /// The limit and capability of the calling thread, against `need` bytes.
    pub fn detect_need(need: u64) -> Self {
        let limit = rustix::process::getrlimit(rustix::process::Resource::Memlock).current;
        let cap_ipc_lock = rustix::thread::capabilities(None)
            .map(|c| {
                c.effective
                    .contains(rustix::thread::CapabilitySet::IPC_LOCK)
            })
            .unwrap_or(false);
        Self {
            limit,
            cap_ipc_lock,
            need,
        }
    }

    /// Whether `need` bytes may be pinned.
    pub fn fits(&self) -> bool {
        self.cap_ipc_lock
            || match self.limit {
                None => true,
                Some(limit) => limit >= self.need,
            }
    }

    /// Why `what` (a direct channel of `config`) cannot pin its memory, with the
    /// numbers and what to change; `None` when it fits.
    pub fn shortfall(&self, what: &str, config: &ChannelConfig) -> Option<String> {
        if self.fits() {
            return None;
        }
        let limit = self.limit.unwrap_or(u64::MAX);
        let staging = config.staging_len();
        let fewer = match slots_that_fit(config, limit) {
            Some(n) => format!(
                "or give the channel at most {n} slots (ChannelConfig::slots; \
                 `gpuio run --slots {n}`)"
            ),
            None => "or give the channel a smaller staging area (ChannelConfig::slots, \
                     slot_size, user_staging)"
                .to_string(),
        };
        Some(format!(
            "RLIMIT_MEMLOCK is {} and this process lacks CAP_IPC_LOCK, but {what} pins {}: \
             its {} staging area is registered as an io_uring fixed buffer, plus {} of ring; \
             raise the limit (`ulimit -l {}` or `unlimited`; docker: `--ulimit memlock=-1`; \
             systemd: `LimitMEMLOCK=infinity`) {fewer}",
            fmt_bytes(limit),
            fmt_bytes(self.need),
            fmt_bytes(staging),
            fmt_bytes(self.need.saturating_sub(staging)),
            self.need.div_ceil(1024),
        ))
    }

    /// The limit in words, and whether it is charged (for capability lines).
    pub fn describe(&self) -> String {
        let limit = self
            .limit
            .map_or_else(|| "unlimited".to_string(), fmt_bytes);
        let charged = if self.cap_ipc_lock {
            "not charged: CAP_IPC_LOCK"
        } else {
            "charged: no CAP_IPC_LOCK"
        };
        format!(
            "{limit} ({charged}); a default direct channel pins {}",
            fmt_bytes(self.need)
        )
    }
}

/// The most slots (a power of two) with which a channel like `config` pins at most
/// `limit` bytes, if one slot fits at all.
fn slots_that_fit(config: &ChannelConfig, limit: u64) -> Option<u32> {
    let mut slots = config.effective_slots();
    loop {
        let c = ChannelConfig {
            endpoints: Vec::new(),
            logs: Vec::new(),
            slots,
            ..*config
        };
        if crate::direct::pinned_bytes(&c) <= limit {
            return Some(slots);
        }
        if slots == 1 {
            return None;
        }
        slots /= 2;
    }
}

/// `17 MiB`, `8.5 MiB`, `36 KiB`, `100 bytes`.
pub fn fmt_bytes(n: u64) -> String {
    const KIB: u64 = 1 << 10;
    const MIB: u64 = 1 << 20;
    if n >= MIB {
        if n.is_multiple_of(MIB) {
            format!("{} MiB", n / MIB)
        } else {
            format!("{:.1} MiB", n as f64 / MIB as f64)
        }
    } else if n >= KIB && n.is_multiple_of(KIB) {
        format!("{} KiB", n / KIB)
    } else if n >= KIB {
        format!("{:.1} KiB", n as f64 / KIB as f64)
    } else {
        format!("{n} bytes")
    }
}

/// What io_uring allows here.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UringProbe {
    /// `kernel.io_uring_disabled`: 0 on, 1 only for `CAP_SYS_ADMIN` or
    /// `kernel.io_uring_group`, 2 off. `None` where the kernel has no such sysctl.
    pub io_uring_disabled: Option<u32>,
    /// A plain `io_uring_setup`.
    pub setup: Fact,
    /// `IORING_SETUP_SQPOLL` (a kernel thread consumes the SQ).
    pub sqpoll: Fact,
    /// `IORING_SETUP_NO_MMAP` with ring memory the caller allocated (Linux 6.5+).
    pub no_mmap: Fact,
    /// `IORING_SETUP_R_DISABLED` and `IORING_REGISTER_RESTRICTIONS` (Linux 5.10+).
    pub restrictions: Fact,
    /// `IORING_REGISTER_ENABLE_RINGS` on a ring created disabled.
    pub enable_rings: Fact,
    /// `IORING_REGISTER_BUFFERS` on shared memory of [`Self::provider`].
    pub fixed_buffers: Fact,
    /// The memory provider the fixed-buffer fact was asked about.
    pub provider: &'static str,
    /// `RLIMIT_MEMLOCK` against what a direct channel of the default
    /// [`ChannelConfig`] pins.
    pub memlock: Memlock,
}

impl UringProbe {
    /// Asks the kernel, fixed buffers on `provider`'s shared memory, then applies
    /// `GPUIO_PROBE_FAKE` (a malformed value is logged and ignored; callers that must
    /// refuse it check [`Fakes::from_env`] themselves).
    pub fn detect(provider: &dyn MemoryProvider) -> Self {
        let fakes = Fakes::from_env().unwrap_or_else(|e| {
            tracing::error!(error = %e, "ignoring {FAKE_ENV}");
            Fakes::default()
        });
        Self::detect_with(provider, &fakes)
    }

    /// Asks the kernel, then reports every fact in `fakes` as refused.
    pub fn detect_with(provider: &dyn MemoryProvider, fakes: &Fakes) -> Self {
        let mut probe = Self {
            io_uring_disabled: read_disabled_sysctl(),
            setup: probe_setup(),
            sqpoll: probe_sqpoll(),
            no_mmap: probe_no_mmap(),
            restrictions: Ok(()),
            enable_rings: Ok(()),
            fixed_buffers: probe_fixed_buffers(provider),
            provider: provider.name(),
            memlock: Memlock::detect(&ChannelConfig::default()),
        };
        (probe.restrictions, probe.enable_rings) = probe_restrictions();
        probe.apply(fakes);
        tracing::debug!(?probe, "io_uring probe");
        probe
    }

    /// Reports every fact in `fakes` as refused.
    pub fn apply(&mut self, fakes: &Fakes) {
        for &(fact, errno) in &fakes.0 {
            let refusal = Err(Refusal {
                call: fact.call(),
                errno: Some(errno),
                detail: String::new(),
                faked: true,
            });
            *self.fact_mut(fact) = refusal;
        }
    }

    pub fn fact(&self, name: FactName) -> &Fact {
        match name {
            FactName::Setup => &self.setup,
            FactName::Sqpoll => &self.sqpoll,
            FactName::NoMmap => &self.no_mmap,
            FactName::Restrictions => &self.restrictions,
            FactName::EnableRings => &self.enable_rings,
            FactName::FixedBuffers => &self.fixed_buffers,
        }
    }

    fn fact_mut(&mut self, name: FactName) -> &mut Fact {
        match name {
            FactName::Setup => &mut self.setup,
            FactName::Sqpoll => &mut self.sqpoll,
            FactName::NoMmap => &mut self.no_mmap,
            FactName::Restrictions => &mut self.restrictions,
            FactName::EnableRings => &mut self.enable_rings,
            FactName::FixedBuffers => &mut self.fixed_buffers,
        }
    }

    /// Every fact as (name, fact), in a fixed order.
    pub fn facts(&self) -> impl Iterator<Item = (FactName, &Fact)> {
        FactName::ALL.into_iter().map(move |n| (n, self.fact(n)))
    }

    /// The direct transport needs every fact. `score` is given when it is available.
    pub fn direct(&self, score: u32) -> Availability {
        if let Err(r) = &self.setup {
            return self.unavailable_setup(r, "direct");
        }
        let missing: Vec<String> = [
            FactName::Sqpoll,
            FactName::NoMmap,
            FactName::Restrictions,
            FactName::EnableRings,
            FactName::FixedBuffers,
        ]
        .into_iter()
        .filter_map(|n| match self.fact(n) {
            Ok(()) => None,
            Err(r) => Some(explain_direct(n, r, self.provider)),
        })
        .chain(self.memlock.shortfall(
            "a direct channel with the default configuration",
            &ChannelConfig::default(),
        ))
        .collect();
        if missing.is_empty() {
            Availability::Available { score }
        } else {
            Availability::Unavailable {
                reason: format!(
                    "{}; the forward transport needs only plain io_uring",
                    missing.join("; ")
                ),
            }
        }
    }

    /// The forward transport needs a plain io_uring.
    pub fn forward(&self, score: u32) -> Availability {
        match &self.setup {
            Ok(()) => Availability::Available { score },
            Err(r) => self.unavailable_setup(r, "forward"),
        }
    }

    /// The mailbox transport needs no io_uring: always available.
    pub fn mailbox(&self, score: u32) -> Availability {
        Availability::Available { score }
    }

    fn unavailable_setup(&self, r: &Refusal, _transport: &str) -> Availability {
        Availability::Unavailable {
            reason: format!(
                "{r} — {}; the mailbox transport needs no io_uring",
                explain_setup(r, self.io_uring_disabled)
            ),
        }
    }
}

/// Why a plain `io_uring_setup` failed, in words a person can act on.
fn explain_setup(r: &Refusal, disabled: Option<u32>) -> String {
    match r.errno {
        Some(Errno::PERM) => match disabled {
            Some(2) => "io_uring is switched off for every process (kernel.io_uring_disabled=2; \
                        `sysctl kernel.io_uring_disabled=0` turns it on)"
                .to_string(),
            Some(1) => "io_uring is allowed only to CAP_SYS_ADMIN or members of \
                        kernel.io_uring_group here (kernel.io_uring_disabled=1)"
                .to_string(),
            Some(0) => "io_uring is blocked here (container seccomp profile or \
                        kernel.io_uring_disabled=2; the sysctl is 0, so a seccomp profile): \
                        run the container with a seccomp profile that allows \
                        io_uring_setup/enter/register"
                .to_string(),
            _ => "io_uring is blocked here (container seccomp profile or \
                  kernel.io_uring_disabled=2); run the container with a seccomp profile \
                  that allows io_uring_setup/enter/register"
                .to_string(),
        },
        Some(Errno::NOSYS) => "this kernel has no io_uring (built without CONFIG_IO_URING, \
                              older than Linux 5.1) or a seccomp filter hides the syscall"
            .to_string(),
        Some(Errno::NOMEM) => "the kernel could not allocate a ring (memory or \
                              RLIMIT_MEMLOCK; `ulimit -l` raises the limit)"
            .to_string(),
        Some(Errno::MFILE) | Some(Errno::NFILE) => {
            "out of file descriptors (`ulimit -n` raises the limit)".to_string()
        }
        _ => "io_uring cannot be set up here".to_string(),
    }
}

/// Why a fact the direct transport needs is missing.
fn explain_direct(n: FactName, r: &Refusal, provider: &str) -> String {
    let why = match (n, r.errno) {
        (FactName::Sqpoll, Some(Errno::PERM)) => {
            "SQPOLL needs CAP_SYS_NICE on kernels before 5.11".to_string()
        }
        (FactName::Sqpoll, _) => "the kernel refuses an SQPOLL ring".to_string(),
        (FactName::NoMmap, Some(Errno::INVAL)) => {
            "IORING_SETUP_NO_MMAP is unsupported (needs Linux 6.5+)".to_string()
        }
        (FactName::NoMmap, _) => {
            "the kernel refuses ring memory allocated by gpuio (IORING_SETUP_NO_MMAP)".to_string()
        }
        (FactName::Restrictions, Some(Errno::INVAL)) => {
            "IORING_SETUP_R_DISABLED/IORING_REGISTER_RESTRICTIONS unsupported (needs Linux 5.10+)"
                .to_string()
        }
        (FactName::Restrictions, _) => "ring restrictions cannot be registered".to_string(),
        (FactName::EnableRings, _) => {
            "a ring created disabled cannot be enabled (IORING_REGISTER_ENABLE_RINGS)".to_string()
        }
        (FactName::FixedBuffers, Some(Errno::NOMEM)) => format!(
            "{provider} memory cannot be registered as a fixed buffer: RLIMIT_MEMLOCK too low \
             (`ulimit -l unlimited`)"
        ),
        (FactName::FixedBuffers, _) => {
            format!("{provider} memory cannot be registered as an io_uring fixed buffer")
        }
        (FactName::Setup, _) => "io_uring cannot be set up".to_string(),
    };
    format!("{r} — {why}")
}

fn read_disabled_sysctl() -> Option<u32> {
    std::fs::read_to_string(DISABLED_SYSCTL)
        .ok()
        .and_then(|s| s.trim().parse().ok())
}

/// Creates a ring and hands its fd back (closed when dropped).
fn setup(call: &'static str, params: &mut io_uring_params) -> Result<OwnedFd, Refusal> {
    // A ring closed just before (by this probe, or another process of this user)
    // may hold the locked-memory limit for a moment: retried as the transports do.
    crate::uring::retry_transient(is_transient_errno, || {
        // SAFETY: ATTACH_WQ is never set here, so `wq_fd` need not be open; with
        // NO_MMAP the caller points `user_addr`s at mappings that outlive the ring's
        // fd (the kernel pins the pages anyway).
        unsafe { io_uring_setup(PROBE_ENTRIES, params) }
    })
    .map_err(|e| Refusal::os(call, e))
}

fn is_transient_errno(e: &Errno) -> bool {
    *e == Errno::NOMEM || *e == Errno::AGAIN
}

fn probe_setup() -> Fact {
    let mut params = io_uring_params::default();
    setup("io_uring_setup", &mut params).map(drop)
}

fn probe_sqpoll() -> Fact {
    let mut params = io_uring_params::default();
    params.flags = IoringSetupFlags::SQPOLL;
    params.sq_thread_idle = 10;
    setup("io_uring_setup(SQPOLL)", &mut params).map(drop)
}

fn probe_no_mmap() -> Fact {
    const CALL: &str = "io_uring_setup(NO_MMAP)";
    // One page each: with PROBE_ENTRIES the SQE array (8 × 64 B) and the rings
    // (header, SQ index array, 16 CQEs) each fit in a page, so no kernel version's
    // "one contiguous folio" rule can refuse them.
    let sqes = AnonMapping::new(4096).map_err(|e| Refusal::memory("mmap", &e))?;
    let rings = AnonMapping::new(4096).map_err(|e| Refusal::memory("mmap", &e))?;
    let mut params = io_uring_params::default();
    params.flags = IoringSetupFlags::NO_MMAP;
    params.sq_off.user_addr = io_uring_ptr::new(sqes.as_ptr().cast::<c_void>());
    params.cq_off.user_addr = io_uring_ptr::new(rings.as_ptr().cast::<c_void>());
    // The ring is closed here, before the mappings it points into are unmapped.
    let fact = setup(CALL, &mut params).map(drop);
    drop((sqes, rings));
    fact
}

/// Returns the restrictions fact and the enable-rings fact.
fn probe_restrictions() -> (Fact, Fact) {
    let mut params = io_uring_params::default();
    params.flags = IoringSetupFlags::R_DISABLED;
    let ring = match setup("io_uring_setup(R_DISABLED)", &mut params) {
        Ok(ring) => ring,
        Err(r) => return (Err(r.clone()), Err(r)),
    };
    // What the direct ring allows: NOP only, and every SQE must name a fixed file.
    let mut nop = io_uring_restriction::default();
    nop.opcode = IoringRestrictionOp::SqeOp;
    nop.register_or_sqe_op_or_sqe_flags.sqe_op = IoringOp::Nop;
    let mut fixed = io_uring_restriction::default();
    fixed.opcode = IoringRestrictionOp::SqeFlagsRequired;
    fixed.register_or_sqe_op_or_sqe_flags.sqe_flags = IoringSqeFlags::FIXED_FILE;
    let list = [nop, fixed];
    // SAFETY: `list` is an array of `list.len()` restriction records that lives across
    // the call; the kernel only reads it.
    let restricted = unsafe {
        io_uring_register(
            &ring,
            IoringRegisterOp::RegisterRestrictions,
            list.as_ptr().cast::<c_void>(),
            list.len() as u32,
        )
    }
    .map(drop)
    .map_err(|e| Refusal::os("io_uring_register(RESTRICTIONS)", e));
    // SAFETY: ENABLE_RINGS takes no argument (null, 0).
    let enabled = unsafe {
        io_uring_register(
            &ring,
            IoringRegisterOp::RegisterEnableRings,
            std::ptr::null(),
            0,
        )
    }
    .map(drop)
    .map_err(|e| Refusal::os("io_uring_register(ENABLE_RINGS)", e));
    (restricted, enabled)
}

/// Whether `provider`'s shared memory can be registered as an io_uring fixed buffer
/// (what the direct transport does with its staging area).
pub fn probe_fixed_buffers(provider: &dyn MemoryProvider) -> Fact {
    let mut params = io_uring_params::default();
    let ring = setup("io_uring_setup", &mut params)?;
    let memory = provider
        .alloc_shared(64 << 10)
        .map_err(|e| Refusal::memory("alloc_shared", &e))?;
    let region = memory.region();
    let iov = iovec {
        iov_base: region.host_ptr.as_ptr().cast::<c_void>(),
        iov_len: region.len,
    };
    let result = crate::uring::retry_transient(is_transient_errno, || {
        // SAFETY: one iovec describing `memory`, which outlives the ring (`ring` is
        // dropped first); the kernel reads the iovec and pins the pages.
        unsafe {
            io_uring_register(
                &ring,
                IoringRegisterOp::RegisterBuffers,
                (&iov as *const iovec).cast::<c_void>(),
                1,
            )
        }
    });
    if result.is_ok() {
        // Unregistering unpins and uncharges the buffer at once; closing the ring
        // would leave that to the kernel's deferred ring teardown, and an `open`
        // right after the probe would find the limit still taken (module doc).
        // SAFETY: UNREGISTER_BUFFERS takes no argument (null, 0).
        let unregistered = unsafe {
            io_uring_register(
                &ring,
                IoringRegisterOp::UnregisterBuffers,
                std::ptr::null(),
                0,
            )
        };
        if let Err(e) = unregistered {
            tracing::warn!(
                errno = %errno_name(e),
                "io_uring_register(UNREGISTER_BUFFERS) failed: the probe's buffer stays \
                 charged to RLIMIT_MEMLOCK until its ring is freed"
            );
        }
    }
    drop(ring);
    drop(memory);
    result
        .map(drop)
        .map_err(|e| Refusal::os("io_uring_register(BUFFERS)", e))
}

/// The symbolic name of an errno (`EPERM`), or `errno N` for the unusual ones.
pub fn errno_name(e: Errno) -> String {
    let n = e.raw_os_error();
    ERRNO_NAMES
        .iter()
        .find(|(v, _)| *v == n)
        .map_or_else(|| format!("errno {n}"), |(_, name)| (*name).to_string())
}

fn errno_from_name(name: &str) -> Option<Errno> {
    let upper = name.to_ascii_uppercase();
    ERRNO_NAMES
        .iter()
        .find(|(_, n)| *n == upper)
        .map(|(v, _)| Errno::from_raw_os_error(*v))
        .or_else(|| name.parse::<i32>().ok().map(Errno::from_raw_os_error))
}

const ERRNO_NAMES: &[(i32, &str)] = &[
    (libc::EPERM, "EPERM"),
    (libc::ENOENT, "ENOENT"),
    (libc::EINTR, "EINTR"),
    (libc::EIO, "EIO"),
    (libc::ENXIO, "ENXIO"),
    (libc::EBADF, "EBADF"),
    (libc::EAGAIN, "EAGAIN"),
    (libc::ENOMEM, "ENOMEM"),
    (libc::EACCES, "EACCES"),
    (libc::EFAULT, "EFAULT"),
    (libc::EBUSY, "EBUSY"),
    (libc::EEXIST, "EEXIST"),
    (libc::ENODEV, "ENODEV"),
    (libc::EINVAL, "EINVAL"),
    (libc::ENFILE, "ENFILE"),
    (libc::EMFILE, "EMFILE"),
    (libc::ENOSPC, "ENOSPC"),
    (libc::ENOSYS, "ENOSYS"),
    (libc::EOPNOTSUPP, "EOPNOTSUPP"),
    (libc::ETIMEDOUT, "ETIMEDOUT"),
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::HostMemory;

    #[test]
    fn fakes_parse_both_forms_and_refuse_typos() {
        let f = Fakes::parse("no_mmap_unsupported, sqpoll=EPERM,setup=38").unwrap();
        assert_eq!(
            f,
            Fakes::none()
                .refuse(FactName::NoMmap, Errno::INVAL)
                .refuse(FactName::Sqpoll, Errno::PERM)
                .refuse(FactName::Setup, Errno::NOSYS)
        );
        assert!(Fakes::parse("").unwrap().is_empty());
        assert!(Fakes::parse("nommap=EINVAL").is_err());
        assert!(Fakes::parse("no_mmap=EWHAT").is_err());
        assert!(Fakes::parse("no_mmap").is_err());
    }

    #[test]
    fn this_kernel_allows_everything_the_direct_transport_needs() {
        // The project's machines run Linux 6.18 with io_uring on (see DESIGN.md §6).
        // Direct also needs RLIMIT_MEMLOCK to hold a default channel, or
        // CAP_IPC_LOCK: CI runs as root (`.ci/run` raises the limit where it can).
        let p = UringProbe::detect_with(&HostMemory, &Fakes::none());
        for (name, fact) in p.facts() {
            assert_eq!(fact, &Ok(()), "{}", name.name());
        }
        assert!(p.direct(3).is_available(), "{:?}", p.direct(3));
        assert!(p.forward(2).is_available());
        assert!(p.mailbox(1).is_available());
    }

    #[test]
    fn no_mmap_unsupported_leaves_forward_and_says_why_direct_is_out() {
        let p = UringProbe::detect_with(
            &HostMemory,
            &Fakes::none().refuse(FactName::NoMmap, Errno::INVAL),
        );
        let Availability::Unavailable { reason } = p.direct(3) else {
            panic!("direct stayed available without NO_MMAP");
        };
        assert!(
            reason.contains("io_uring_setup(NO_MMAP): EINVAL"),
            "{reason}"
        );
        assert!(reason.contains("6.5"), "{reason}");
        assert!(reason.contains("faked"), "{reason}");
        assert!(p.forward(2).is_available());
    }

    #[test]
    fn a_blocked_setup_names_errno_and_points_at_the_mailbox() {
        let mut p = UringProbe::detect_with(&HostMemory, &Fakes::none());
        for (errno, words) in [(Errno::PERM, "EPERM"), (Errno::NOSYS, "ENOSYS")] {
            p.apply(&Fakes::none().refuse(FactName::Setup, errno));
            for a in [p.direct(3), p.forward(2)] {
                let Availability::Unavailable { reason } = a else {
                    panic!("available without io_uring_setup");
                };
                assert!(
                    reason.starts_with(&format!("io_uring_setup: {words}")),
                    "{reason}"
                );
                assert!(
                    reason.contains("mailbox transport needs no io_uring"),
                    "{reason}"
                );
            }
            assert!(p.mailbox(1).is_available());
        }
    }

    fn default_need() -> u64 {
        crate::direct::pinned_bytes(&ChannelConfig::default())
    }

    #[test]
    fn a_default_direct_channel_pins_its_17_mib_staging_and_its_ring() {
        let c = ChannelConfig::default();
        assert_eq!(c.staging_len(), 17 << 20);
        let need = default_need();
        assert!(need > 17 << 20, "{need}");
        assert!(
            need <= (17 << 20) + (64 << 10),
            "ring memory is tens of KiB: {need}"
        );
    }

    #[test]
    fn memlock_below_a_default_channels_need_refuses_direct_with_the_numbers() {
        let mut p = UringProbe::detect_with(&HostMemory, &Fakes::none());
        p.memlock = Memlock {
            limit: Some(8 << 20),
            cap_ipc_lock: false,
            need: default_need(),
        };
        let Availability::Unavailable { reason } = p.direct(3) else {
            panic!("direct stayed available with 8 MiB of RLIMIT_MEMLOCK");
        };
        for words in [
            "RLIMIT_MEMLOCK is 8 MiB",
            "lacks CAP_IPC_LOCK",
            "17 MiB staging area",
            "ulimit -l",
            "at most 64 slots",
            "forward transport",
        ] {
            assert!(reason.contains(words), "{words:?} missing from: {reason}");
        }
        assert!(p.forward(2).is_available());
        assert!(p.mailbox(1).is_available());
    }

    #[test]
    fn memlock_is_no_obstacle_with_cap_ipc_lock_with_no_limit_or_with_room() {
        let need = default_need();
        for (limit, cap) in [(Some(64 << 10), true), (None, false), (Some(need), false)] {
            let m = Memlock {
                limit,
                cap_ipc_lock: cap,
                need,
            };
            assert!(m.fits(), "{m:?}");
            assert_eq!(m.shortfall("x", &ChannelConfig::default()), None);
        }
        let tiny = Memlock {
            limit: Some(64 << 10),
            cap_ipc_lock: false,
            need,
        };
        let reason = tiny.shortfall("x", &ChannelConfig::default()).unwrap();
        assert!(reason.contains("smaller staging area"), "{reason}");
    }

    #[test]
    fn eperm_with_the_sysctl_at_two_names_the_sysctl() {
        let r = Refusal::os("io_uring_setup", Errno::PERM);
        assert!(explain_setup(&r, Some(2)).contains("kernel.io_uring_disabled=2"));
        assert!(explain_setup(&r, Some(0)).contains("seccomp"));
    }
}
