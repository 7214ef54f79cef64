// Test shim: exposes gpuio/printf.h (compiled here as host C++) to device/tests/printf.rs.
#include "gpuio/abi.h"
#include "gpuio/arch.h"
#include "gpuio/printf.h"

extern "C" int gpuio_test_vformat(char *out, unsigned long long cap, const char *fmt, const gpuio_fmt_arg *args,
                                  int nargs) {
  return gpuio_vformat(out, cap, fmt, args, nargs);
}

// gpuio_snprintf with no argument at all.
extern "C" int gpuio_test_snprintf_noargs(char *out, unsigned long long cap, const char *fmt) {
  return gpuio_snprintf(out, cap, fmt);
}

// gpuio_snprintf over one value of every C++ type gpuio_make_arg takes, in this order
// (the Rust test passes the format and prints the same values, promoted by hand,
// through the host snprintf):
//   char 'x', signed char -5, unsigned char 250, short -300, unsigned short 65000, int -7,
//   unsigned 4000000000, long -8, unsigned long 18000000000000000000, long long -9,
//   unsigned long long max, bool true, char16_t 0x20ac, char32_t 0x1f600, wchar_t 'A',
//   float 1.5, double 0.1, string literal "literal", char *text, void *ptr,
//   const void *ptr, const int *iptr, nullptr, (int *)nullptr
extern "C" int gpuio_test_snprintf_typed(char *out, unsigned long long cap, const char *fmt, char *text, void *ptr,
                                         const int *iptr) {
  return gpuio_snprintf(out, cap, fmt, 'x', (signed char)-5, (unsigned char)250, (short)-300, (unsigned short)65000,
                        -7, 4000000000u, -8L, 18000000000000000000ul, -9LL, 18446744073709551615ull, true,
                        u'\u20ac', U'\U0001F600', L'A', 1.5f, 0.1, "literal", text, ptr, (const void *)ptr, iptr,
                        nullptr, (int *)nullptr);
}

// The kind and bits gpuio_make_arg gives each type, for the packing test; returns how
// many entries exist and copies at most n of them.
extern "C" int gpuio_test_make_arg_kinds(gpuio_fmt_arg *out, int n) {
  const gpuio_fmt_arg all[] = {
      gpuio_make_arg((signed char)-1),
      gpuio_make_arg((short)-1),
      gpuio_make_arg(-1),
      gpuio_make_arg(-1L),
      gpuio_make_arg(-1LL),
      gpuio_make_arg((unsigned char)255),
      gpuio_make_arg((unsigned short)65535),
      gpuio_make_arg(4294967295u),
      gpuio_make_arg(18446744073709551615ul),
      gpuio_make_arg(18446744073709551615ull),
      gpuio_make_arg(true),
      gpuio_make_arg(2.5f),
      gpuio_make_arg(-2.5),
      gpuio_make_arg("s"),
      gpuio_make_arg((void *)16),
      gpuio_make_arg(nullptr),
      gpuio_make_arg((long *)32),
      gpuio_make_arg((char)65),
  };
  int count = (int)(sizeof(all) / sizeof(all[0]));
  for (int i = 0; i < n && i < count; ++i) out[i] = all[i];
  return count;
}
