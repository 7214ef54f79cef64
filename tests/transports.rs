//! Acceptance: every conformance case on the CPU device over every transport,
//! against real files and real io_uring rings.

use std::sync::Arc;

use gpuio::backends::transport_builder as builder;
use gpuio::conformance::{Target, CASES};
use gpuio_core::{Channel, ChannelConfig, HostMemory, MemoryProvider, TransportKind};
use gpuio_device::cpu::CpuDevice;

fn run_case(kind: TransportKind, case: &str) {
    let case = CASES.iter().find(|c| c.name == case).expect("case exists");
    if let Some(why) = case.skip_reason(kind) {
        eprintln!("skipped: {kind} {}: {why}", case.name);
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let provider: Arc<dyn MemoryProvider> = Arc::new(HostMemory);
    let b = builder(kind);
    let open = |cfg: ChannelConfig| {
        Channel::open(provider.clone(), b.as_ref(), cfg).map_err(|e| e.to_string())
    };
    let target = Target {
        device: &CpuDevice,
        transport: kind,
        open: &open,
        dir: dir.path(),
    };
    match (case.run)(&target) {
        Ok(detail) => println!("{kind} {}: {detail}", case.name),
        Err(e) => panic!("{kind} {}: {e}", case.name),
    }
}

macro_rules! cases {
    ($($transport:ident: $kind:expr;)*) => {$(
        mod $transport {
            use super::*;
            #[test]
            fn nop_round_trips() {
                run_case($kind, "nop_round_trips");
            }
            #[test]
            fn pwrite_pread_64_threads_x_1000_leave_the_file_byte_identical() {
                run_case($kind, "pwrite_pread_64_threads_x_1000");
            }
            #[test]
            fn printf_lines_from_64_threads_arrive_whole_and_in_order() {
                run_case($kind, "printf_lines_arrive_whole_and_in_order");
            }
            #[test]
            fn bad_input_gives_its_errno_writes_nothing_and_the_channel_stays_usable() {
                run_case($kind, "bad_input_gives_errno_and_writes_nothing");
            }
            #[test]
            fn close_with_requests_in_flight_is_bounded_and_loses_nothing() {
                run_case($kind, "close_with_requests_in_flight");
            }
            #[test]
            fn a_launch_filling_the_device_writes_reads_and_prints_every_row() {
                run_case($kind, "full_device_write_read_printf");
            }
            #[test]
            fn every_call_with_a_null_channel_returns_einval_instead_of_crashing() {
                run_case($kind, "null_channel_gives_einval_from_every_call");
            }
            #[test]
            fn printf_of_a_line_longer_than_a_slot_keeps_its_newline_and_says_it_was_cut() {
                run_case($kind, "printf_cuts_long_lines_whole_and_refuses_overflow");
            }
            #[test]
            fn close_reports_as_many_timeouts_as_the_kernel_saw() {
                run_case($kind, "close_reports_every_timeout_the_kernel_saw");
            }
            #[test]
            fn a_raw_request_beyond_an_endpoints_declared_access_gets_ebadf_and_changes_nothing() {
                run_case($kind, "raw_requests_beyond_declared_access_get_ebadf");
            }
            #[test]
            fn asynchronous_calls_keep_requests_in_flight_and_are_byte_exact() {
                run_case($kind, "async_calls_keep_requests_in_flight_byte_exact");
            }
            #[test]
            fn one_thread_may_keep_more_async_calls_in_flight_than_its_ring_has_slots() {
                run_case($kind, "one_thread_keeps_more_async_calls_than_its_ring_has_slots");
            }
            #[test]
            fn warp_cooperative_calls_write_and_read_back_byte_exact() {
                run_case($kind, "warp_calls_write_and_read_back_byte_exact");
            }
            #[test]
            fn one_table_of_bad_requests_gets_the_same_errno_on_every_transport() {
                run_case($kind, "one_rulebook_the_same_errno_on_every_transport");
            }
            #[test]
            fn messages_from_every_thread_to_a_host_queue_arrive_once_whole_and_in_each_threads_order() {
                run_case($kind, "queue_to_host_every_message_once_whole_in_thread_order");
            }
            #[test]
            fn messages_through_a_device_queue_reach_the_kernel_once_and_every_recv_ends_with_zero() {
                run_case($kind, "queue_to_device_every_message_once_and_every_recv_ends_with_0");
            }
            #[test]
            fn misusing_a_host_queue_from_a_kernel_gives_the_documented_errno() {
                run_case($kind, "queue_misuse_gives_the_documented_errno");
            }
            #[test]
            fn a_read_that_never_completes_holds_only_its_own_slot() {
                run_case($kind, "a_stuck_read_holds_only_its_own_slot");
            }
            #[test]
            fn a_kernel_moving_the_direct_sq_tail_is_caught_while_it_runs_and_close_is_not_clean() {
                run_case($kind, "a_kernel_moving_the_sq_tail_is_a_violation_seen_while_it_runs");
            }
            #[test]
            fn scribbled_forward_stamps_are_reported_and_every_other_request_is_served() {
                run_case($kind, "scribbled_forward_stamps_are_reported_and_wedge_nothing");
            }
            #[test]
            fn a_files_long_writes_take_slots_of_its_ring_group_and_land_exact() {
                run_case($kind, "a_files_long_writes_take_slots_of_its_ring_group");
            }
        }
    )*};
}

cases! {
    direct: TransportKind::Direct;
    forward: TransportKind::Forward;
    mailbox: TransportKind::Mailbox;
}

#[test]
fn every_conformance_case_is_run_on_every_transport() {
    // The macro above lists the cases by hand; keep it in step with CASES.
    assert_eq!(CASES.len(), 21);
}
