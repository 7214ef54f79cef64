// Written by someone who had read only the README and gpuio.h's opening comment,
// never gpuio's source (the acceptance check of "users' own kernels"); kept as
// they wrote it. tests/examples.rs runs it with `gpuio run --compare`.
//
// mine.cu — per-thread line/word count over slices of a text file.
//
// Endpoints:  0 = input text (r), 1 = summary output (w)
// params[0]  = input size in bytes (set with --arg)
// params[1]  = total lines  (kernel adds with an atomic)
// params[2]  = total words  (kernel adds with an atomic)
// params[3]  = number of failed I/O calls (kernel adds)
//
// Thread t owns bytes [t*slice, min((t+1)*slice, size)), slice = ceil(size/threads).
// A "line" is a '\n' byte in the slice; a "word" is a non-space byte whose
// previous byte (in the whole file) is a space or the start of the file, so
// words straddling slice boundaries are counted once.
// Each thread writes one 64-byte record at offset t*64 of the output file.
#include "gpuio.h"

#define REC 64
#define CHUNK 4096

// A macro rather than a helper function: the header documents no portable
// device-function qualifier, and __device__ is not defined on the CPU device.
#define IS_SPACE(c) ((c) == ' ' || (c) == '\n' || (c) == '\t' || (c) == '\r' || (c) == '\v' || (c) == '\f')

GPUIO_KERNEL(count_slices)(const gpuio_channel *ch, gpuio_u64 *params) {
  const int IN = 0, OUT = 1;
  gpuio_u64 t = gpuio_global_thread_id();
  gpuio_u64 n = gpuio_thread_count();
  gpuio_u64 size = params[0];
  gpuio_u64 slice = (size + n - 1) / n;
  gpuio_u64 begin = t * slice < size ? t * slice : size;
  gpuio_u64 end = begin + slice < size ? begin + slice : size;

  gpuio_u64 lines = 0, words = 0, errors = 0;
  char buf[CHUNK];

  // Previous byte: start of file counts as a space.
  int prev_space = 1;
  if (begin > 0) {
    gpuio_i64 r = gpuio_pread(ch, IN, buf, 1, (gpuio_i64)(begin - 1));
    if (r == 1) prev_space = IS_SPACE(buf[0]);
    else errors++;
  }

  gpuio_u64 off = begin;
  while (off < end) {
    gpuio_u64 want = end - off < CHUNK ? end - off : CHUNK;
    gpuio_i64 r = gpuio_pread(ch, IN, buf, want, (gpuio_i64)off);
    if (r <= 0) { errors++; break; }  // -errno, or unexpected EOF
    for (gpuio_i64 i = 0; i < r; i++) {
      char c = buf[i];
      int sp = IS_SPACE(c);
      if (c == '\n') lines++;
      if (!sp && prev_space) words++;
      prev_space = sp;
    }
    off += (gpuio_u64)r;
  }

  // One fixed-width 64-byte record per thread: 63 chars padded with spaces + '\n'.
  char body[REC];
  gpuio_snprintf(body, sizeof body, "t=%05llu off=%08llu len=%06llu lines=%06llu words=%06llu",
                 t, begin, end - begin, lines, words);
  char rec[REC + 1];
  int len = gpuio_snprintf(rec, sizeof rec, "%-63s\n", body);
  gpuio_i64 w = gpuio_pwrite(ch, OUT, rec, (gpuio_u64)len, (gpuio_i64)(t * REC));
  if (w != len) errors++;

  gpuio_fetch_add_64(&params[1], lines);
  gpuio_fetch_add_64(&params[2], words);
  if (errors) gpuio_fetch_add_64(&params[3], errors);

  gpuio_printf(ch, "thread %llu: bytes [%llu,%llu) lines=%llu words=%llu%s\n",
               t, begin, end, lines, words, errors ? " (I/O ERRORS)" : "");
}
