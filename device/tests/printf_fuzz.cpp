// Differential fuzz driver: gpuio_snprintf (gpuio/printf.h, compiled here as host
// C++) against the host C library's snprintf, on formats and arguments generated
// from a seed. Built and run by device/tests/printf_fuzz.rs.
//
// Each seed gives one case: one directive with its * width and precision, or two
// directives in a row; the values are passed to both formatters in their real C++
// types (char, short, unsigned long, float, const char *, nullptr, ...), so
// gpuio_snprintf's own argument packing is under test too, not only the formatter
// behind it. Each case is compared at the full size and at three truncating caps:
// same return value, same bytes, nothing written past cap.
//
// Left out on purpose, where gpuio differs from glibc by design (printf.h's header
// comment): %n (gpuio stores nothing), %lc and %ls (wide characters), L (no long
// double on GPUs), positional arguments (%1$d), and a directive cut off at the end
// of the format (glibc returns -1).
//
// Usage: printf_fuzz FIRST_SEED COUNT [SECONDS]: seeds FIRST_SEED .. FIRST_SEED +
// COUNT, stopping early after SECONDS if given. Prints the mismatches (at most 20)
// and a last line "N passed, N failed"; exits 1 if any case differed.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "gpuio/abi.h"
#define GPUIO_FN static inline
#define GPUIO_NOINLINE static __attribute__((noinline))
#include "gpuio/printf.h"

namespace {

// splitmix64, as device/tests/printf.rs: a seed reproduces its case.
struct Rng {
  uint64_t s;
  uint64_t next() {
    s += 0x9e3779b97f4a7c15ull;
    uint64_t z = s;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  uint64_t below(uint64_t n) { return next() % n; }
  bool one_in(uint64_t n) { return below(n) == 0; }
  int64_t range(int64_t lo, int64_t hi) { return lo + (int64_t)below((uint64_t)(hi - lo + 1)); }
  template <typename T, size_t N> T pick(const T (&items)[N]) { return items[below(N)]; }
};

// Integers with many edge values: boundaries of every width, small numbers, random
// bit patterns of random magnitude and sign.
uint64_t gen_bits(Rng &r) {
  static const uint64_t edges[] = {0,      1,          UINT64_MAX,  0x7f,        0x80,
                                   0xff,   0x100,      0x7fff,      0x8000,      0xffff,
                                   0x7fffffff, 0x80000000, 0xffffffff, 0x100000000ull,
                                   0x7fffffffffffffffull, 0x8000000000000000ull};
  switch (r.below(5)) {
  case 0: return r.below(21);
  case 1: return r.pick(edges) + (uint64_t)r.range(-1, 1);
  case 2: return r.next() >> r.below(64);
  case 3: return -(r.next() >> r.below(64));
  default: return r.next();
  }
}

double from_bits(uint64_t b) {
  double d;
  std::memcpy(&d, &b, sizeof d);
  return d;
}

double gen_double(Rng &r) {
  const double sign = r.one_in(3) ? -1.0 : 1.0;
  static const double specials[] = {0.0,    -0.0,   0.5,  1.5, 2.5, 1e300 * 1e300, -1e300 * 1e300,
                                    1.0 / 3, 0.1,   1e-5, 1e15, 1e16, 123456789.0,  2.2250738585072014e-308};
  switch (r.below(7)) {
  case 0: return from_bits(r.next());
  case 1: return from_bits(r.below(1ull << 52) | (r.below(2) << 63)); /* subnormal */
  case 2: return sign * (double)r.range(0, 2000000) / (double)(1ull << r.below(12));
  case 3: {
    double v = (double)r.range(0, 999999);
    for (int64_t e = r.range(-30, 30); e != 0; e += e < 0 ? 1 : -1) v = e < 0 ? v / 10 : v * 10;
    return sign * v;
  }
  case 4: return r.pick(specials) * sign;
  case 5: return from_bits(0x7ff8000000000000ull | r.below(1ull << 51) | (r.below(2) << 63)); /* nan */
  default: return sign * from_bits(0x3ff0000000000000ull + (r.below(200) << 52) - (100ull << 52) + r.below(1ull << 52));
  }
}

std::string gen_text(Rng &r, uint64_t max) {
  static const char chars[] = "abcXYZ019 -=:,.()[]{}\t\n\\\"'#*";
  std::string s;
  for (uint64_t n = r.below(max + 1); n; --n) s += chars[r.below(sizeof chars - 1)];
  return s;
}

// One argument, in the C++ type it is passed as.
enum Type {
  T_INT, T_UINT, T_LONG, T_ULONG, T_LLONG, T_ULLONG, T_SCHAR, T_UCHAR, T_SHORT, T_USHORT, T_CHAR, T_BOOL,
  T_DOUBLE, T_FLOAT, T_STR, T_NULL_STR, T_PTR, T_NULLPTR,
};
struct Arg {
  Type type;
  uint64_t bits;
  double f;
  const char *s;
};

// The texts %s may print; they live as long as the program.
const char *const texts[] = {"", "x", "hello", "a longer string, with: punctuation!", "tab\there", "12345678901234567890"};

// Passes `a` in its type to k(args..., value): one instantiation per type.
template <typename K, typename... P> int with(const Arg &a, K k, P... p) {
  switch (a.type) {
  case T_INT: return k(p..., (int)a.bits);
  case T_UINT: return k(p..., (unsigned)a.bits);
  case T_LONG: return k(p..., (long)a.bits);
  case T_ULONG: return k(p..., (unsigned long)a.bits);
  case T_LLONG: return k(p..., (long long)a.bits);
  case T_ULLONG: return k(p..., (unsigned long long)a.bits);
  case T_SCHAR: return k(p..., (signed char)a.bits);
  case T_UCHAR: return k(p..., (unsigned char)a.bits);
  case T_SHORT: return k(p..., (short)a.bits);
  case T_USHORT: return k(p..., (unsigned short)a.bits);
  case T_CHAR: return k(p..., (char)a.bits);
  case T_BOOL: return k(p..., (bool)(a.bits & 1));
  case T_DOUBLE: return k(p..., a.f);
  case T_FLOAT: return k(p..., (float)a.f);
  case T_STR: return k(p..., a.s);
  case T_NULL_STR: return k(p..., (const char *)nullptr);
  case T_PTR: return k(p..., (void *)(uintptr_t)a.bits);
  case T_NULLPTR: return k(p..., nullptr);
  }
  return -2;
}

// One directive: its text and the arguments it reads (* width, * precision, value).
struct Directive {
  std::string fmt;
  Arg args[3];
  int nargs;
  int stars; /* leading * arguments */
};

bool host_has_binary() {
  char b[8];
  return std::snprintf(b, sizeof b, "%b", 5u) == 3 && std::memcmp(b, "101", 3) == 0;
}

Directive gen_directive(Rng &r, bool star, bool binary) {
  static const char convs[] = {'d', 'i', 'u', 'o', 'x', 'X', 'b', 'B', 'c', 's', 'p', 'f', 'F',
                               'e', 'E', 'g', 'G', 'a', 'A', '%', 'd', 'x', 'g', 'y'};
  char conv = r.pick(convs);
  if ((conv == 'b' || conv == 'B') && !binary) conv = 'u';
  const bool is_float = std::strchr("fFeEgGaA", conv) != nullptr;
  Directive d;
  d.fmt = "%";
  d.nargs = 0;
  d.stars = 0;
  static const char flags[] = {'-', '+', ' ', '#', '0', '-', '+', ' ', '#', '0', '\''};
  for (uint64_t n = r.below(4); n; --n) d.fmt += r.pick(flags);
  switch (r.below(6)) {
  case 0:
  case 1: break;
  case 2:
  case 3: d.fmt += std::to_string(r.below(25)); break;
  case 4: d.fmt += std::to_string(r.one_in(8) ? r.range(100, 300) : (int64_t)r.below(12)); break;
  default:
    if (star) {
      d.fmt += '*';
      d.args[d.nargs++] = Arg{T_INT, (uint64_t)r.range(-30, 30), 0, nullptr};
      d.stars++;
    }
  }
  switch (r.below(6)) {
  case 0:
  case 1: break;
  case 2: d.fmt += '.'; break;
  case 3:
  case 4: {
    const int64_t p = is_float ? (r.one_in(10) ? r.range(21, 120) : r.range(0, 20)) : r.range(0, 30);
    d.fmt += "." + std::to_string(p);
    break;
  }
  default:
    if (star) {
      d.fmt += ".*";
      d.args[d.nargs++] = Arg{T_INT, (uint64_t)r.range(-8, 40), 0, nullptr};
      d.stars++;
    }
  }
  const uint64_t bits = gen_bits(r);
  Arg v{T_INT, bits, 0, nullptr};
  static const char *const lens[] = {"", "", "", "hh", "h", "l", "ll", "j", "z", "t"};
  switch (conv) {
  case 'd':
  case 'i': {
    const char *len = r.pick(lens);
    d.fmt += len;
    static const Type narrow[] = {T_INT, T_INT, T_SCHAR, T_UCHAR, T_SHORT, T_USHORT, T_CHAR, T_BOOL};
    v.type = !*len || len[0] == 'h' ? r.pick(narrow) : std::strcmp(len, "ll") == 0 ? T_LLONG : T_LONG;
    break;
  }
  case 'u':
  case 'o':
  case 'x':
  case 'X':
  case 'b':
  case 'B': {
    const char *len = r.pick(lens);
    d.fmt += len;
    static const Type narrow[] = {T_UINT, T_UINT, T_UCHAR, T_USHORT, T_BOOL};
    v.type = !*len || len[0] == 'h' ? r.pick(narrow) : std::strcmp(len, "ll") == 0 ? T_ULLONG : T_ULONG;
    break;
  }
  case 'c': {
    static const Type chars[] = {T_INT, T_CHAR, T_UCHAR, T_SCHAR};
    v.type = r.pick(chars);
    break;
  }
  case 's':
    v.type = r.one_in(8) ? T_NULL_STR : T_STR;
    v.s = r.pick(texts);
    break;
  case 'p': {
    static const Type ptrs[] = {T_PTR, T_PTR, T_PTR, T_NULLPTR};
    v.type = r.pick(ptrs);
    if (r.one_in(5)) v.bits = 0;
    break;
  }
  case '%':
  case 'y': v.type = T_INT; break; /* reads nothing (an unknown conversion: see printf.h) */
  default:
    if (r.one_in(6)) d.fmt += 'l'; /* %lf is %f */
    v.type = r.one_in(4) ? T_FLOAT : T_DOUBLE;
    v.f = gen_double(r);
  }
  d.fmt += conv;
  if (conv != '%' && conv != 'y') d.args[d.nargs++] = v;
  return d;
}

constexpr size_t CANARY = 16;

struct Out {
  int ret;
  std::string buf; /* cap bytes and the canary after them */
};

// Calls a formatter with the arguments in their types. F(out, cap, fmt, args...)
// forwards to snprintf or gpuio_snprintf.
template <typename F> struct Call {
  char *out;
  size_t cap;
  const char *fmt;
  template <typename... A> int operator()(A... a) const { return F::run(out, cap, fmt, a...); }
};
struct Host {
  template <typename... A> static int run(char *o, size_t cap, const char *fmt, A... a) {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
#pragma GCC diagnostic ignored "-Wformat-security"
    return std::snprintf(o, cap, fmt, a...);
#pragma GCC diagnostic pop
  }
};
struct Gpuio {
  template <typename... A> static int run(char *o, size_t cap, const char *fmt, A... a) {
    return gpuio_snprintf(o, (gpuio_u64)cap, fmt, a...);
  }
};

// Calls the formatter with the case's arguments in their types: a value alone, a
// value after one or two * arguments (ints), or two values.
template <typename F> int call_with(const Call<F> &c, const Arg *a, int n, int stars) {
  switch (stars * 4 + n) {
  case 0: return c();
  case 1: return with(a[0], c);
  case 2: return with(a[0], [&](auto x) { return with(a[1], c, x); });
  case 4 + 2: return with(a[1], c, (int)a[0].bits);
  case 8 + 3: return with(a[2], c, (int)a[0].bits, (int)a[1].bits);
  default: return -2;
  }
}

template <typename F> Out format(const std::string &fmt, const Arg *args, int n, int stars, size_t cap) {
  Out o;
  o.buf.assign(cap + CANARY, 'Z');
  o.ret = call_with(Call<F>{&o.buf[0], cap, fmt.c_str()}, args, n, stars);
  return o;
}

std::string shown(const Arg &a) {
  char b[96];
  switch (a.type) {
  case T_DOUBLE:
  case T_FLOAT: std::snprintf(b, sizeof b, "%s %a", a.type == T_FLOAT ? "float" : "double", a.f); break;
  case T_STR: std::snprintf(b, sizeof b, "\"%s\"", a.s); break;
  case T_NULL_STR: return "(const char *)nullptr";
  case T_NULLPTR: return "nullptr";
  default: std::snprintf(b, sizeof b, "type %d bits %#llx", (int)a.type, (unsigned long long)a.bits);
  }
  return b;
}

std::string escaped(const std::string &s) {
  std::string e;
  for (unsigned char c : s) {
    char b[8];
    if (c >= 0x20 && c < 0x7f && c != '\\' && c != '"') e += (char)c;
    else std::snprintf(b, sizeof b, "\\x%02x", c), e += b;
  }
  return e;
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s FIRST_SEED COUNT [SECONDS]\n", argv[0]);
    return 2;
  }
  const uint64_t first = std::strtoull(argv[1], nullptr, 0), count = std::strtoull(argv[2], nullptr, 0);
  const double seconds = argc > 3 ? std::strtod(argv[3], nullptr) : 0;
  const auto start = std::chrono::steady_clock::now();
  const bool binary = host_has_binary();
  uint64_t passed = 0, failed = 0;
  for (uint64_t seed = first; seed - first < count; ++seed) {
    if (seconds > 0 && (seed - first) % 256 == 0 &&
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > seconds)
      break;
    Rng r{seed * 0x2545f4914f6cdd1dull};
    std::string fmt = gen_text(r, 4);
    Arg args[3];
    int n = 0, stars = 0;
    const int directives = r.one_in(3) ? 2 : 1;
    for (int i = 0; i < directives; ++i) {
      /* * arguments only with one directive: at most three arguments a call. */
      const Directive d = gen_directive(r, directives == 1, binary);
      fmt += d.fmt + gen_text(r, 3);
      for (int k = 0; k < d.nargs; ++k) args[n++] = d.args[k];
      stars += d.stars;
    }
    const int need = format<Host>(fmt, args, n, stars, 0).ret;
    const size_t full = need < 0 ? 64 : (size_t)need + 1;
    const size_t caps[] = {full, 0, 1, (size_t)r.below(full + 1)};
    bool ok = true;
    for (size_t cap : caps) {
      /* Byte-exact: the output, its NUL, and every byte after it up to cap and the
       * canary past cap left as they were. */
      const Out h = format<Host>(fmt, args, n, stars, cap), g = format<Gpuio>(fmt, args, n, stars, cap);
      if (h.ret == g.ret && h.buf == g.buf) continue;
      ok = false;
      if (failed < 20) {
        std::printf("seed %llu: format \"%s\" cap %zu\n", (unsigned long long)seed, escaped(fmt).c_str(), cap);
        for (int k = 0; k < n; ++k) std::printf("  arg %d: %s\n", k, shown(args[k]).c_str());
        std::printf("  host  ret %d \"%s\"\n  gpuio ret %d \"%s\"\n", h.ret, escaped(h.buf).c_str(), g.ret,
                    escaped(g.buf).c_str());
      }
      break;
    }
    (ok ? passed : failed) += 1;
  }
  std::printf("%llu passed, %llu failed\n", (unsigned long long)passed, (unsigned long long)failed);
  std::fflush(stdout);
  return failed ? 1 : 0;
}
