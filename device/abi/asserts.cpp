// Compiles gpuio.h against the asserts build.rs generates from core/src/abi.rs's
// layout(): one named static_assert per size, alignment, offset and constant, so a
// header that drifts from the Rust ABI fails the build and names the entry.
// Compiled on its own (it defines nothing): the include path of the generated header
// ($OUT_DIR) is this unit's alone.
#include <cstddef>

#include "gpuio.h"
#include "gpuio_abi_asserts.h"
