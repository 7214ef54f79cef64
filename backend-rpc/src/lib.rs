//! gpuio-backend-rpc: the mailbox transport — LLVM-libc-style RPC, one port per
//! warp, a host server thread executing plain syscalls. Needs no io_uring.

pub mod mailbox;
