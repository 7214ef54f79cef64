//! io_uring set-up (see the direct transport).
