/* gpuio/printf.h — placeholder until the formatter lands: copies the format verbatim. */
#ifndef GPUIO_PRINTF_H
#define GPUIO_PRINTF_H
template <typename... A> GPUIO_FN int gpuio_snprintf(char *out, gpuio_u64 cap, const char *fmt, A... a) {
  int n = 0;
  for (; fmt[n]; n++)
    if ((gpuio_u64)n + 1 < cap) out[n] = fmt[n];
  if (cap) out[(gpuio_u64)n < cap ? n : cap - 1] = 0;
  return n;
}
#endif
