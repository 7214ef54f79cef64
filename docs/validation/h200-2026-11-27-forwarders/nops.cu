#include "gpuio.h"
/* Every thread makes params[0] NOPs; params[1] counts failures. */
GPUIO_KERNEL(nops)(const gpuio_channel *ch, gpuio_u64 *p) {
  for (gpuio_u64 i = 0; i < p[0]; i++)
    if (gpuio_nop(ch) != 0) gpuio_fetch_add_64(&p[1], 1u);
}
