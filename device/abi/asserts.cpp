// Compiles gpuio.h against the asserts build.rs generates from core/src/abi.rs's
// layout(): one named static_assert per size, alignment, offset and constant, so a
// header that drifts from the Rust ABI fails the build and names the entry.
// Compiled on its own (it defines nothing): the include path of the generated header
// ($OUT_DIR) is this unit's alone.
#include <cstddef>

#include "gpuio.h"
#include "gpuio_abi_asserts.h"

// gpuio_impl_descriptor_address (gpuio/api.h) refuses a pointer that is not 64-byte
// aligned before reading through it: a descriptor always is.
static_assert(alignof(gpuio_channel) == 64, "a descriptor's address is 64-byte aligned");

// gpuio_impl_check_channel and gpuio_impl_call_load (gpuio/api.h) read these words
// as 16-byte pairs at fixed offsets: a layout that moves them must move the loads.
static_assert(offsetof(gpuio_channel, magic) == 0 && offsetof(gpuio_channel, version) == 4 &&
                  offsetof(gpuio_channel, transport) == 8 && offsetof(gpuio_channel, closing) == 12,
              "the checks' strong pair at 0: magic | version, transport | closing");
static_assert(offsetof(gpuio_channel, timeout_ns) == 16 && offsetof(gpuio_channel, staging) == 24,
              "the call's pair at 16: timeout_ns, staging");
static_assert(offsetof(gpuio_channel, slot_size) == 48 && offsetof(gpuio_channel, slots) == 52,
              "the call's pair at 48: slot_size | slots");
static_assert(offsetof(gpuio_channel, forward) == 192 && offsetof(gpuio_forward_queue, state) == 8 &&
                  offsetof(gpuio_forward_queue, slot_state) == 16 && offsetof(gpuio_forward_queue, rings) == 24 &&
                  offsetof(gpuio_forward_queue, write_group) == 28,
              "the call's pairs at 192 and 208: forward's entries, state | slot_state, rings | write_group");
