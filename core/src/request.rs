//! Host-side validation of a request, shared by every transport whose host sees
//! requests (forward, mailbox). The direct ring is confined by the kernel instead.

use std::borrow::Borrow;

use crate::abi;
use crate::endpoint::Endpoint;

/// A request that passed validation: the endpoint exists and allows the op, and the
/// bytes lie inside the staging area.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Checked {
    pub op: u32,
    pub endpoint: u32,
    /// Offset of the bytes in the staging area.
    pub staging_off: usize,
    pub len: usize,
    pub offset: i64,
}

/// Checks `req` against the endpoint table and the staging area, in the order the
/// device header checks it, and returns `-errno` for the first rule it breaks:
/// unknown op → `-EINVAL`; NOP → accepted; endpoint not registered → `-EBADF`;
/// access not granted → `-EBADF`; op not meaningful on the kind → `-ESPIPE`;
/// `len == 0` or `len > staging_len` → `-EINVAL`; bytes outside staging → `-EFAULT`.
/// `endpoints` is the channel's table as any slice of endpoints: `&[Endpoint]`, or
/// the `&[Arc<Endpoint>]` a transport holds.
pub fn validate<E: Borrow<Endpoint>>(
    req: &abi::Request,
    endpoints: &[E],
    staging_len: u64,
) -> Result<Checked, i32> {
    match req.op {
        abi::op::NOP => {
            return Ok(Checked {
                op: req.op,
                endpoint: req.endpoint,
                staging_off: 0,
                len: 0,
                offset: 0,
            })
        }
        abi::op::PWRITE | abi::op::PREAD | abi::op::WRITE | abi::op::READ => {}
        _ => return Err(-libc::EINVAL),
    }
    let ep: &Endpoint = endpoints
        .get(req.endpoint as usize)
        .ok_or(-libc::EBADF)?
        .borrow();
    if !ep.access.allows_op(req.op) {
        return Err(-libc::EBADF);
    }
    if !ep.kind.allows_op(req.op) {
        return Err(-libc::ESPIPE);
    }
    if req.len == 0 || u64::from(req.len) > staging_len {
        return Err(-libc::EINVAL);
    }
    let end = req
        .staging_off
        .checked_add(u64::from(req.len))
        .ok_or(-libc::EFAULT)?;
    if end > staging_len {
        return Err(-libc::EFAULT);
    }
    if matches!(req.op, abi::op::PWRITE | abi::op::PREAD) && req.offset < 0 {
        return Err(-libc::EINVAL);
    }
    Ok(Checked {
        op: req.op,
        endpoint: req.endpoint,
        staging_off: req.staging_off as usize,
        len: req.len as usize,
        offset: req.offset,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::endpoint::{Access, Endpoint};

    fn table() -> (tempfile::NamedTempFile, Vec<Endpoint>) {
        let f = tempfile::NamedTempFile::new().unwrap();
        let eps = vec![
            Endpoint::file("rw", f.as_file(), Access::READ_WRITE).unwrap(),
            Endpoint::file("ro", f.as_file(), Access::READ).unwrap(),
        ];
        (f, eps)
    }

    fn req(op: u32, endpoint: u32, staging_off: u64, len: u32) -> abi::Request {
        abi::Request {
            op,
            endpoint,
            len,
            flags: 0,
            staging_off,
            offset: 0,
        }
    }

    #[test]
    fn each_bad_field_gives_its_errno() {
        let (_f, eps) = table();
        let v = |r| validate(&r, &eps, 4096);
        assert!(v(req(abi::op::PWRITE, 0, 0, 16)).is_ok());
        assert_eq!(v(req(0x1234, 0, 0, 16)), Err(-libc::EINVAL), "unknown op");
        assert_eq!(
            v(req(abi::op::PWRITE, 2, 0, 16)),
            Err(-libc::EBADF),
            "unregistered"
        );
        assert_eq!(
            v(req(abi::op::PWRITE, 1, 0, 16)),
            Err(-libc::EBADF),
            "read-only"
        );
        assert_eq!(
            v(req(abi::op::PWRITE, 0, 0, 0)),
            Err(-libc::EINVAL),
            "len 0"
        );
        assert_eq!(
            v(req(abi::op::PWRITE, 0, 0, 4097)),
            Err(-libc::EINVAL),
            "len > staging"
        );
        assert_eq!(
            v(req(abi::op::PWRITE, 0, 4090, 16)),
            Err(-libc::EFAULT),
            "outside staging"
        );
        assert_eq!(
            v(req(abi::op::PWRITE, 0, u64::MAX, 16)),
            Err(-libc::EFAULT),
            "overflow"
        );
        assert!(
            v(req(abi::op::NOP, 99, 0, 0)).is_ok(),
            "nop names no endpoint"
        );
    }
}
