//! The mailbox transport (device side in gpuio/mailbox.h).
