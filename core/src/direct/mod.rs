//! The direct transport: the device writes io_uring SQEs itself (host side: ring set-up, waker, teardown).
