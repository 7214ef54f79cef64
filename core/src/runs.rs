//! Runs of positioned requests, for a transport's host half: pwrites (or preads)
//! taken together (in one pass over a forward ring, one round over mailbox ports)
//! that cover one file's bytes end to end (each thread of a kernel writing or
//! reading its own record at `t * size`, say) go to the kernel as one vectored
//! write (or read).
//!
//! Why: a buffered write to a file whose file system cannot write without blocking
//! (ext4) is handed by io_uring to an io-wq worker, one file's writes one at a time,
//! so each request paid a worker's hand-off, a few microseconds, for 64 bytes of
//! copying; plain `pwrite`s from several threads queue on the file's lock. A read
//! from the page cache is done at once, but each one still costs an SQE, a
//! completion and the kernel's own per-call work.
//!
//! What a run promises: its requests were all published before they were taken
//! and none was answered, so no two of them are ordered by any thread (a thread's
//! next request waits for the answer to its last); making them as one vectored
//! call is one of the orders they could have run in. Only ranges that follow each
//! other exactly are joined (no overlap, no gap), on the same endpoint. Each
//! request is answered with its share of what the call did ([`shares`]): the
//! whole of its length, or for a short write or a read that met the end of the
//! file the part of its range that was done (0 past it), or the error of a call
//! that failed.

use std::sync::Arc;

use crate::endpoint::Endpoint;
use crate::request::{Request, Staging};

/// Most requests one vectored call carries (`IOV_MAX` on Linux).
pub const MOST_PARTS: usize = 1024;

/// A validated pwrite or pread taken from the device, not yet made: one part of
/// a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Part {
    /// The transport's name for the request (forward's position, mailbox's port).
    pub id: u64,
    pub endpoint: u32,
    pub staging: Staging,
    pub offset: u64,
}

/// Which way a run moves bytes: a pwrite's, or a pread's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    Write,
    Read,
}

impl Part {
    /// The part a positioned request (`Pwrite`, `Pread`) makes, known to the
    /// transport as `id`, and which way it moves bytes; `None` for any other request.
    pub fn of(id: u64, request: &Request) -> Option<(Self, Direction)> {
        let (endpoint, staging, offset, direction) = match *request {
            Request::Pwrite {
                endpoint,
                staging,
                offset,
            } => (endpoint, staging, offset, Direction::Write),
            Request::Pread {
                endpoint,
                staging,
                offset,
            } => (endpoint, staging, offset, Direction::Read),
            _ => return None,
        };
        let part = Self {
            id,
            endpoint,
            staging,
            offset,
        };
        Some((part, direction))
    }

    /// The request alone (a pwrite or a pread), to be made by itself.
    pub fn request(&self, direction: Direction) -> Request {
        let (endpoint, staging, offset) = (self.endpoint, self.staging, self.offset);
        match direction {
            Direction::Write => Request::Pwrite {
                endpoint,
                staging,
                offset,
            },
            Direction::Read => Request::Pread {
                endpoint,
                staging,
                offset,
            },
        }
    }

    fn end(&self) -> u64 {
        self.offset + self.staging.len() as u64
    }
}

/// Sorts `parts` by endpoint and offset and splits them into runs: consecutive
/// requests of one endpoint, each starting where the one before ended, at most
/// [`MOST_PARTS`] to a run. Every request is in exactly one run, in that order.
pub fn runs(parts: &mut [Part]) -> Vec<std::ops::Range<usize>> {
    parts.sort_unstable_by_key(|w| (w.endpoint, w.offset, w.id));
    let mut out = Vec::new();
    let mut start = 0;
    for i in 1..=parts.len() {
        let joins = i < parts.len()
            && i - start < MOST_PARTS
            && parts[i].endpoint == parts[i - 1].endpoint
            && parts[i].offset == parts[i - 1].end();
        if !joins {
            out.push(start..i);
            start = i;
        }
    }
    out
}

/// A run's iovecs: each part's staging range, in the staging area that starts at
/// host address `staging`. Only addresses are computed here; whoever passes them to
/// the kernel keeps that area mapped.
pub fn iovecs(staging: *mut u8, run: &[Part]) -> Box<[libc::iovec]> {
    run.iter()
        .map(|w| libc::iovec {
            iov_base: staging.wrapping_add(w.staging.off()).cast(),
            iov_len: w.staging.len(),
        })
        .collect()
}

/// Makes a run (one endpoint's ranges end to end, as [`runs`] makes them) from
/// this thread with one `pwritev(2)` or `preadv(2)` to its endpoint's descriptor:
/// each part's answer ([`shares`]; a part past a file's end reads 0, as its own
/// pread would), or `-EBADF` for each where the endpoint has none. Reads want a
/// regular file ([`Endpoint::is_regular_file`]): a pipe's short read does not mean
/// its end.
///
/// # Safety
///
/// `staging` is the host address of a staging area that holds every part's range
/// (as [`validate`](crate::request::validate) checks against `endpoints`) and stays
/// mapped for the call, and no Rust reference points into it.
pub unsafe fn make(
    direction: Direction,
    endpoints: &[Arc<Endpoint>],
    staging: *mut u8,
    run: &[Part],
) -> Vec<i32> {
    let Some(first) = run.first() else {
        return Vec::new();
    };
    let Some(fd) = endpoints
        .get(first.endpoint as usize)
        .and_then(|ep| ep.fd())
    else {
        return vec![-libc::EBADF; run.len()];
    };
    let iovecs = iovecs(staging, run);
    // Validated offsets are at most i64::MAX - len.
    let offset = i64::try_from(first.offset).unwrap_or(i64::MAX);
    let call = match direction {
        Direction::Write => crate::uring::sys::pwritev,
        Direction::Read => crate::uring::sys::preadv,
    };
    // SAFETY: every iovec names a range inside the mapped staging area (the caller's
    // promise), reached by no Rust reference.
    let result = match unsafe { call(fd, &iovecs, offset) } {
        Ok(n) => i32::try_from(n).unwrap_or(i32::MAX),
        Err(e) => -e.raw_os_error(),
    };
    shares(result, run.iter().map(|w| w.staging.len()))
}

/// Each part's answer when a vectored write or read of parts of `lens` bytes, in
/// order, returned `result`: an error goes to every part; bytes done are handed out
/// from the first part on, each part getting at most its length.
pub fn shares(result: i32, lens: impl IntoIterator<Item = usize>) -> Vec<i32> {
    let mut left = result;
    lens.into_iter()
        .map(|len| {
            if result < 0 {
                return result;
            }
            let share = left.min(i32::try_from(len).unwrap_or(i32::MAX));
            left -= share;
            share
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A pwrite of `len` bytes at `offset` from staging chunk `pos`.
    fn pw(pos: u64, endpoint: u32, offset: u64, len: usize) -> Part {
        Part {
            id: pos,
            endpoint,
            staging: Staging::unchecked(pos as usize * 4096, len),
            offset,
        }
    }

    fn positions(parts: &[Part], runs: &[std::ops::Range<usize>]) -> Vec<Vec<u64>> {
        runs.iter()
            .map(|r| parts[r.clone()].iter().map(|w| w.id).collect())
            .collect()
    }

    #[test]
    fn records_written_end_to_end_in_any_order_make_one_run() {
        let mut w = vec![pw(2, 0, 128, 64), pw(0, 0, 0, 64), pw(1, 0, 64, 64)];
        let r = runs(&mut w);
        assert_eq!(positions(&w, &r), vec![vec![0, 1, 2]]);
    }

    #[test]
    fn a_gap_an_overlap_or_another_endpoint_ends_a_run() {
        let mut w = vec![
            pw(0, 0, 0, 64),
            pw(1, 0, 64, 64),
            pw(2, 0, 200, 8), // a gap before it
            pw(3, 0, 204, 8), // overlaps the one before
            pw(4, 1, 212, 8), // another endpoint, though where 3 ended
            pw(5, 1, 220, 8),
        ];
        let r = runs(&mut w);
        assert_eq!(
            positions(&w, &r),
            vec![vec![0, 1], vec![2], vec![3], vec![4, 5]]
        );
    }

    #[test]
    fn a_run_holds_at_most_iov_max_parts() {
        let mut w: Vec<_> = (0..2500u64).map(|i| pw(i % 200, 0, i * 8, 8)).collect();
        let r = runs(&mut w);
        let lens: Vec<_> = r.iter().map(|r| r.len()).collect();
        assert_eq!(lens, vec![MOST_PARTS, MOST_PARTS, 2500 - 2 * MOST_PARTS]);
        assert!(
            w.windows(2).all(|p| p[0].offset < p[1].offset),
            "sorted by offset"
        );
    }

    #[test]
    fn a_positioned_request_makes_a_part_that_says_whether_it_reads() {
        let staging = Staging::unchecked(4096, 48);
        let (endpoint, offset) = (2, 96);
        let want = Part {
            id: 7,
            endpoint,
            staging,
            offset,
        };
        let write = Request::Pwrite {
            endpoint,
            staging,
            offset,
        };
        let read = Request::Pread {
            endpoint,
            staging,
            offset,
        };
        assert_eq!(Part::of(7, &write), Some((want, Direction::Write)));
        assert_eq!(Part::of(7, &read), Some((want, Direction::Read)));
        assert_eq!(want.request(Direction::Write), write);
        assert_eq!(want.request(Direction::Read), read);
        assert_eq!(Part::of(7, &Request::Nop), None);
        let stream = Request::Write { endpoint, staging };
        assert_eq!(Part::of(7, &stream), None, "a stream write has no position");
    }

    #[test]
    fn no_parts_make_no_runs() {
        assert!(runs(&mut []).is_empty());
    }

    #[test]
    fn a_runs_iovecs_name_each_parts_staging_range_in_file_order() {
        let mut staging = vec![0u8; 4 * 4096];
        let base = staging.as_mut_ptr();
        let mut w = vec![pw(3, 0, 64, 16), pw(1, 0, 0, 64)];
        let r = runs(&mut w);
        let iov = iovecs(base, &w[r[0].clone()]);
        let got: Vec<_> = iov
            .iter()
            .map(|v| (v.iov_base as usize - base as usize, v.iov_len))
            .collect();
        assert_eq!(got, vec![(4096, 64), (3 * 4096, 16)]);
    }

    #[test]
    fn each_part_is_answered_with_its_share_of_the_writev() {
        assert_eq!(shares(192, [64, 64, 64]), vec![64, 64, 64], "all written");
        assert_eq!(shares(100, [64, 64, 64]), vec![64, 36, 0], "a short write");
        assert_eq!(shares(0, [8, 8]), vec![0, 0], "nothing written");
        assert_eq!(
            shares(-libc::ENOSPC, [8, 8]),
            vec![-libc::ENOSPC, -libc::ENOSPC],
            "an error is every part's"
        );
    }
}
