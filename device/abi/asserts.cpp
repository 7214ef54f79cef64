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
