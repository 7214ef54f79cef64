//! gpuio-backend-rpc: the mailbox transport — LLVM-libc-style RPC, mailbox ports
//! in shared memory, host server threads executing plain syscalls. Needs no io_uring.

pub mod mailbox;
mod sys;
