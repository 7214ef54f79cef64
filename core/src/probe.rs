//! What io_uring allows on this machine (set-up, SQPOLL, NO_MMAP, restrictions, fixed buffers).
