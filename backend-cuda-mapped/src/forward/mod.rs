//! The forward transport: the device queues compact requests; one host forwarder thread feeds an io_uring.
