/* gpuio/printf.h — C99/glibc-compatible printf formatting for device code.
 *
 * Include after gpuio/abi.h and gpuio/arch.h. This file includes nothing, calls no
 * libc function and keeps no global state, so NVRTC/hiprtc can compile it with no
 * include path. No recursion, no allocation; the deepest stack use is the exact
 * float conversion (about 1.2 KB: 90 base-1e9 limbs plus an 800-digit buffer; ptxas
 * reports a 1200-byte frame, no spills, for sm_90). Every function is GPUIO_FN, so
 * on CUDA each call site inlines the whole formatter: call it from few places.
 *
 *   gpuio_snprintf(out, cap, fmt, args...)   variadic template (no va_list on GPUs)
 *   gpuio_vformat(out, cap, fmt, args, n)    the same over a gpuio_fmt_arg array
 *
 * Both behave like C99 snprintf: at most cap-1 bytes plus a NUL go to out (nothing at
 * all when cap == 0 or out is null), and the return value is the length the
 * whole output would have had. Output is byte-for-byte what glibc prints (tested
 * against the host glibc by device/tests/printf.rs), including:
 *   - floats converted exactly (big-integer arithmetic on the binary value) and
 *     rounded half-to-even on the exact value, for any precision: there is no
 *     precision cap, digits past the exact expansion are zeros;
 *   - "inf"/"nan" ("-nan" when the sign bit is set), padded with spaces even with 0;
 *   - %p: "(nil)" for null, otherwise "0x" + lowercase hex as glibc's %#lx, which
 *     honours + and space, precision and 0 like a number;
 *   - %s of a null pointer: "(null)", or "" when a precision below 6 is given;
 *   - %c and %s pad with spaces even with the 0 flag; "%5%" prints a bare "%";
 *   - glibc's one %#g deviation from ISO C: when rounding carries a number that
 *     had all its digits before the point into the next power of ten, the e-style
 *     result keeps no fraction digits ("%#g" of 999999.5 is "1.e+06").
 *
 * Conversions: d i u o x X b B c s p f F e E g G a A % and n (b/B: binary, as in C23
 * and glibc >= 2.35; # prefixes 0b/0B). Flags - + space # 0, and glibc's ' and I
 * (accepted, no effect). Width and precision as digits or * (a negative * width
 * means -, a negative * precision means none). Length modifiers hh h l ll j z t, and
 * L q Z as glibc (64-bit), applied to the promoted value exactly as C does (%hhd of
 * 300 prints 44, %hx of -1 prints ffff); long is 64-bit (LP64). There is no long
 * double on GPUs: %Lf and friends read a double.
 *
 * Where C leaves it undefined, this formatter chooses (documented, never crashing):
 *   - a conversion with no argument left reads a zero value: 0, 0.0, or a null
 *     pointer ("(nil)" for %p, "(null)" for %s);
 *   - the integer-class kinds (INT, UINT, PTR, STR) are interchangeable, as in the
 *     LP64 calling convention: %d %x %c %p and * read their 64-bit value. %s reads only
 *     PTR or STR (anything else is a null string; an integer is never dereferenced).
 *     A DOUBLE read by an integer conversion, or a non-DOUBLE read by a float
 *     conversion, reads as zero;
 *   - %n consumes its argument and stores nothing; %lc prints one byte like %c;
 *     %ls (wchar_t strings) consumes its argument and is copied verbatim;
 *   - an unknown conversion (%y, %m, ...) is printed back as glibc does: "%", the
 *     flags in canonical order, width, precision (a * shows the value it read, which
 *     it consumes), the conversion character; length modifiers are dropped. An
 *     incomplete directive at the end of the format ("abc%") is copied verbatim
 *     (glibc returns -1 there);
 *   - positional arguments (%1$d) are not supported: "%1$" is an unknown directive;
 *   - a null fmt formats as "";
 *   - if the full length exceeds 2^31-1 the return value is -1 (glibc: EOVERFLOW);
 *     what fits in cap is still written.
 */
#ifndef GPUIO_PRINTF_H
#define GPUIO_PRINTF_H

/* One formatted argument, after C's default argument promotions. */
typedef struct gpuio_fmt_arg {
  gpuio_u32 kind; /* GPUIO_ARG_* */
  gpuio_u32 _pad;
  union {
    gpuio_i64 i;
    gpuio_u64 u;
    double f;
    const void *p;
  } v;
} gpuio_fmt_arg;

#define GPUIO_ARG_INT 1    /* any signed integer type, sign-extended to i64 */
#define GPUIO_ARG_UINT 2   /* any unsigned integer type, zero-extended */
#define GPUIO_ARG_DOUBLE 3 /* float or double */
#define GPUIO_ARG_PTR 4    /* void* and other pointers */
#define GPUIO_ARG_STR 5    /* const char* / char* */

static_assert(sizeof(gpuio_fmt_arg) == 16, "gpuio_fmt_arg");

/* ------------------------------------------------------------ argument packing */

GPUIO_FN gpuio_fmt_arg gpuio_fmt_arg_of(gpuio_u32 kind, gpuio_u64 bits) {
  gpuio_fmt_arg a;
  a.kind = kind;
  a._pad = 0;
  a.v.u = bits;
  return a;
}
GPUIO_FN gpuio_fmt_arg gpuio_fmt_arg_signed(gpuio_i64 x) { return gpuio_fmt_arg_of(GPUIO_ARG_INT, (gpuio_u64)x); }
GPUIO_FN gpuio_fmt_arg gpuio_fmt_arg_unsigned(gpuio_u64 x) { return gpuio_fmt_arg_of(GPUIO_ARG_UINT, x); }
GPUIO_FN gpuio_fmt_arg gpuio_fmt_arg_ptr(gpuio_u32 kind, const void *p) {
  gpuio_fmt_arg a;
  a.kind = kind;
  a._pad = 0;
  a.v.p = p;
  return a;
}

/* char, wchar_t: kind follows the target's signedness; the value is exact either way. */
GPUIO_FN gpuio_fmt_arg gpuio_make_arg(char x) {
  return (char)-1 < (char)0 ? gpuio_fmt_arg_signed((gpuio_i64)x) : gpuio_fmt_arg_unsigned((gpuio_u64)(gpuio_i64)x);
}
GPUIO_FN gpuio_fmt_arg gpuio_make_arg(wchar_t x) {
  return (wchar_t)-1 < (wchar_t)0 ? gpuio_fmt_arg_signed((gpuio_i64)x) : gpuio_fmt_arg_unsigned((gpuio_u64)(gpuio_i64)x);
}
GPUIO_FN gpuio_fmt_arg gpuio_make_arg(signed char x) { return gpuio_fmt_arg_signed(x); }
GPUIO_FN gpuio_fmt_arg gpuio_make_arg(short x) { return gpuio_fmt_arg_signed(x); }
GPUIO_FN gpuio_fmt_arg gpuio_make_arg(int x) { return gpuio_fmt_arg_signed(x); }
GPUIO_FN gpuio_fmt_arg gpuio_make_arg(long x) { return gpuio_fmt_arg_signed(x); }
GPUIO_FN gpuio_fmt_arg gpuio_make_arg(long long x) { return gpuio_fmt_arg_signed(x); }
GPUIO_FN gpuio_fmt_arg gpuio_make_arg(bool x) { return gpuio_fmt_arg_unsigned(x ? 1u : 0u); }
GPUIO_FN gpuio_fmt_arg gpuio_make_arg(unsigned char x) { return gpuio_fmt_arg_unsigned(x); }
GPUIO_FN gpuio_fmt_arg gpuio_make_arg(unsigned short x) { return gpuio_fmt_arg_unsigned(x); }
GPUIO_FN gpuio_fmt_arg gpuio_make_arg(unsigned int x) { return gpuio_fmt_arg_unsigned(x); }
GPUIO_FN gpuio_fmt_arg gpuio_make_arg(unsigned long x) { return gpuio_fmt_arg_unsigned(x); }
GPUIO_FN gpuio_fmt_arg gpuio_make_arg(unsigned long long x) { return gpuio_fmt_arg_unsigned(x); }
GPUIO_FN gpuio_fmt_arg gpuio_make_arg(char16_t x) { return gpuio_fmt_arg_unsigned(x); }
GPUIO_FN gpuio_fmt_arg gpuio_make_arg(char32_t x) { return gpuio_fmt_arg_unsigned(x); }
GPUIO_FN gpuio_fmt_arg gpuio_make_arg(float x) {
  gpuio_fmt_arg a;
  a.kind = GPUIO_ARG_DOUBLE;
  a._pad = 0;
  a.v.f = (double)x;
  return a;
}
GPUIO_FN gpuio_fmt_arg gpuio_make_arg(double x) {
  gpuio_fmt_arg a;
  a.kind = GPUIO_ARG_DOUBLE;
  a._pad = 0;
  a.v.f = x;
  return a;
}
GPUIO_FN gpuio_fmt_arg gpuio_make_arg(const char *s) { return gpuio_fmt_arg_ptr(GPUIO_ARG_STR, s); }
GPUIO_FN gpuio_fmt_arg gpuio_make_arg(char *s) { return gpuio_fmt_arg_ptr(GPUIO_ARG_STR, s); }
GPUIO_FN gpuio_fmt_arg gpuio_make_arg(const void *p) { return gpuio_fmt_arg_ptr(GPUIO_ARG_PTR, p); }
GPUIO_FN gpuio_fmt_arg gpuio_make_arg(void *p) { return gpuio_fmt_arg_ptr(GPUIO_ARG_PTR, p); }
GPUIO_FN gpuio_fmt_arg gpuio_make_arg(decltype(nullptr)) { return gpuio_fmt_arg_ptr(GPUIO_ARG_PTR, nullptr); }
template <typename T> GPUIO_FN gpuio_fmt_arg gpuio_make_arg(T *p) {
  return gpuio_fmt_arg_ptr(GPUIO_ARG_PTR, (const void *)p);
}

/* ------------------------------------------------------------------ output sink */

typedef struct gpuio_fmt_sink {
  char *out;
  gpuio_u64 cap;
  gpuio_u64 pos; /* bytes produced so far, written or not */
} gpuio_fmt_sink;

/* Room left for bytes (one byte of cap is kept for the NUL). */
GPUIO_FN gpuio_u64 gpuio_fmt_room(const gpuio_fmt_sink *s) { return s->pos + 1 < s->cap ? s->cap - 1 - s->pos : 0; }

GPUIO_FN void gpuio_fmt_putc(gpuio_fmt_sink *s, char c) {
  if (s->pos + 1 < s->cap) s->out[s->pos] = c;
  s->pos++;
}

/* n copies of c; counts past the room without looping over them. */
GPUIO_FN void gpuio_fmt_fill(gpuio_fmt_sink *s, char c, gpuio_i64 n) {
  if (n <= 0) return;
  gpuio_u64 room = gpuio_fmt_room(s), w = (gpuio_u64)n < room ? (gpuio_u64)n : room;
  for (gpuio_u64 i = 0; i < w; ++i) s->out[s->pos + i] = c;
  s->pos += (gpuio_u64)n;
}

GPUIO_FN void gpuio_fmt_write(gpuio_fmt_sink *s, const char *p, gpuio_i64 n) {
  if (n <= 0) return;
  gpuio_u64 room = gpuio_fmt_room(s), w = (gpuio_u64)n < room ? (gpuio_u64)n : room;
  for (gpuio_u64 i = 0; i < w; ++i) s->out[s->pos + i] = p[i];
  s->pos += (gpuio_u64)n;
}

/* Digits d[from, to) of a digit string of length nd, reading '0' outside [0, nd). */
GPUIO_FN void gpuio_fmt_digits(gpuio_fmt_sink *s, const char *d, gpuio_i64 nd, gpuio_i64 from, gpuio_i64 to) {
  if (from >= to) return;
  if (from < 0) {
    gpuio_i64 e = to < 0 ? to : 0;
    gpuio_fmt_fill(s, '0', e - from);
    from = e;
  }
  if (from < to && from < nd) {
    gpuio_i64 e = to < nd ? to : nd;
    gpuio_fmt_write(s, d + from, e - from);
    from = e;
  }
  gpuio_fmt_fill(s, '0', to - from);
}

/* ------------------------------------------------------------------ directives */

#define GPUIO_FMT_MINUS 1u
#define GPUIO_FMT_PLUS 2u
#define GPUIO_FMT_SPACE 4u
#define GPUIO_FMT_ALT 8u
#define GPUIO_FMT_ZERO 16u
#define GPUIO_FMT_GROUP 32u /* ' : no effect (no locale), kept for unknown directives */
#define GPUIO_FMT_I18N 64u  /* I : likewise */

typedef struct gpuio_fmt_spec {
  gpuio_u32 flags;
  gpuio_i64 width; /* >= 0 */
  gpuio_i64 prec;  /* -1: none */
  char conv;
} gpuio_fmt_spec;

/* Pads `len` bytes of content to the width: spaces before (right-aligned) or after
 * (with -). Call with before=1 ahead of the content and before=0 after it. */
GPUIO_FN void gpuio_fmt_pad(gpuio_fmt_sink *s, const gpuio_fmt_spec *sp, gpuio_i64 len, int before) {
  int left = (sp->flags & GPUIO_FMT_MINUS) != 0;
  if (before != left) gpuio_fmt_fill(s, ' ', sp->width - len);
}

/* A string of n bytes, padded with spaces (the 0 flag does not apply). */
GPUIO_FN void gpuio_fmt_padded(gpuio_fmt_sink *s, const gpuio_fmt_spec *sp, const char *p, gpuio_i64 n) {
  gpuio_fmt_pad(s, sp, n, 1);
  gpuio_fmt_write(s, p, n);
  gpuio_fmt_pad(s, sp, n, 0);
}

/* sign (0 if none), then prefix (pn bytes), then digits padded as C prescribes. */
GPUIO_FN void gpuio_fmt_number(gpuio_fmt_sink *s, const gpuio_fmt_spec *sp, char sign, const char *prefix,
                               gpuio_i64 pn, gpuio_i64 zeros, const char *dig, gpuio_i64 nd) {
  gpuio_i64 len = (sign ? 1 : 0) + pn + zeros + nd;
  int zero_pad = (sp->flags & (GPUIO_FMT_ZERO | GPUIO_FMT_MINUS)) == GPUIO_FMT_ZERO;
  if (!zero_pad) gpuio_fmt_pad(s, sp, len, 1);
  if (sign) gpuio_fmt_putc(s, sign);
  gpuio_fmt_write(s, prefix, pn);
  if (zero_pad) gpuio_fmt_fill(s, '0', sp->width - len);
  gpuio_fmt_fill(s, '0', zeros);
  gpuio_fmt_write(s, dig, nd);
  gpuio_fmt_pad(s, sp, len, 0);
}

/* An integer conversion of magnitude mag (sign already decided). */
GPUIO_FN void gpuio_fmt_integer(gpuio_fmt_sink *s, const gpuio_fmt_spec *sp, gpuio_u64 mag, char sign, gpuio_u32 base,
                                int upper, const char *prefix, gpuio_i64 pn) {
  char tmp[64], dig[64];
  gpuio_i64 n = 0, nd = 0;
  if (!(mag == 0 && sp->prec == 0)) {
    do {
      gpuio_u32 v = (gpuio_u32)(mag % base);
      tmp[n++] = (char)(v < 10 ? '0' + v : (upper ? 'A' : 'a') + (v - 10));
      mag /= base;
    } while (mag != 0);
  }
  while (n > 0) dig[nd++] = tmp[--n];
  gpuio_i64 zeros = sp->prec > nd ? sp->prec - nd : 0;
  /* %#o: the first digit must be 0 */
  if (base == 8 && (sp->flags & GPUIO_FMT_ALT) && zeros == 0 && (nd == 0 || dig[0] != '0')) zeros = 1;
  gpuio_fmt_spec t = *sp;
  if (t.prec >= 0) t.flags &= ~GPUIO_FMT_ZERO; /* a precision disables 0-padding */
  gpuio_fmt_number(s, &t, sign, prefix, pn, zeros, dig, nd);
}

/* --------------------------------------------------------- exact float decimal */

#define GPUIO_FMT_LIMBS 90   /* base-1e9 limbs: 2^53 * 5^1074 < 10^767 needs 86 */
#define GPUIO_FMT_DIGITS 800 /* decimal digits: at most 9 * 86 */

/* Writes the exact decimal expansion of mant * 2^e2 (mant != 0) to d: nd digits with
 * no leading or trailing zeros, the decimal point after the first *pt of them (a
 * point position <= 0 or > nd means leading or trailing zeros). Returns nd. */
GPUIO_FN gpuio_i64 gpuio_fmt_exact(gpuio_u64 mant, int e2, char *d, gpuio_i64 *pt) {
  const gpuio_u32 B = 1000000000u;
  while ((mant & 1u) == 0) {
    mant >>= 1;
    ++e2;
  }
  gpuio_u32 limb[GPUIO_FMT_LIMBS]; /* little-endian base 1e9 */
  int n = 0;
  do {
    limb[n++] = (gpuio_u32)(mant % B);
    mant /= B;
  } while (mant != 0);
  int k = 0; /* value = limbs / 10^k */
  if (e2 < 0) k = -e2;
  int rem = e2 > 0 ? e2 : k;
  while (rem > 0) {
    /* multiply by 2^29 or 5^13 at a time: limb * factor + carry stays below 2^64 */
    gpuio_u64 factor = 1;
    int step = e2 > 0 ? (rem < 29 ? rem : 29) : (rem < 13 ? rem : 13);
    for (int j = 0; j < step; ++j) factor *= e2 > 0 ? 2u : 5u;
    rem -= step;
    gpuio_u64 carry = 0;
    for (int i = 0; i < n; ++i) {
      gpuio_u64 t = (gpuio_u64)limb[i] * factor + carry;
      limb[i] = (gpuio_u32)(t % B);
      carry = t / B;
    }
    while (carry != 0 && n < GPUIO_FMT_LIMBS) {
      limb[n++] = (gpuio_u32)(carry % B);
      carry /= B;
    }
  }
  gpuio_i64 nd = 0;
  char top[9];
  int nt = 0;
  for (gpuio_u32 v = limb[n - 1]; v != 0; v /= 10) top[nt++] = (char)('0' + v % 10);
  while (nt > 0) d[nd++] = top[--nt];
  for (int i = n - 2; i >= 0; --i) {
    gpuio_u32 v = limb[i];
    for (int j = 8; j >= 0; --j) {
      d[nd + j] = (char)('0' + v % 10);
      v /= 10;
    }
    nd += 9;
  }
  *pt = nd - k;
  while (nd > 0 && d[nd - 1] == '0') --nd;
  return nd;
}

/* Rounds the digit string to its first r digits (r may be <= 0 or >= nd), half to
 * even on the exact value; keeps it free of trailing zeros. Zero gets nd = 0, pt = 1. */
GPUIO_FN void gpuio_fmt_round(char *d, gpuio_i64 *nd, gpuio_i64 *pt, gpuio_i64 r) {
  if (r >= *nd) return;
  int up = 0;
  if (r >= 0) {
    char c = d[r];
    /* the digit string has no trailing zeros: anything after d[r] is nonzero */
    int more = r + 1 < *nd;
    int odd = r > 0 && ((d[r - 1] - '0') & 1);
    up = c > '5' || (c == '5' && (more || odd));
  }
  gpuio_i64 n = r < 0 ? 0 : r;
  if (up) {
    gpuio_i64 i = n - 1;
    while (i >= 0 && d[i] == '9') --i;
    if (i < 0) { /* 999 -> 1000 */
      d[0] = '1';
      n = 1;
      *pt += 1;
    } else {
      d[i] = (char)(d[i] + 1);
      n = i + 1;
    }
  }
  while (n > 0 && d[n - 1] == '0') --n;
  *nd = n;
  if (n == 0) *pt = 1;
}

/* %a: hexadecimal float, as glibc prints it (leading digit 1 for normal numbers, 0
 * for subnormals and zero; rounding to a precision can make the leading digit 2). */
GPUIO_FN void gpuio_fmt_hexfloat(gpuio_fmt_sink *s, const gpuio_fmt_spec *sp, gpuio_u64 bits, char sign, int upper) {
  gpuio_u32 be = (gpuio_u32)(bits >> 52) & 0x7ffu;
  gpuio_u64 frac = bits & ((1ull << 52) - 1);
  gpuio_u64 lead = be != 0 ? 1 : 0;
  gpuio_i64 exp = be != 0 ? (gpuio_i64)be - 1023 : (frac != 0 ? -1022 : 0);
  gpuio_i64 nh; /* hex digits after the point */
  if (sp->prec < 0) {
    nh = 13;
    while (nh > 0 && ((frac >> (4 * (13 - nh))) & 0xfu) == 0) --nh;
  } else {
    nh = sp->prec;
    if (nh < 13) {
      int drop = 4 * (13 - (int)nh);
      gpuio_u64 kept = (lead << (52 - drop)) | (frac >> drop);
      gpuio_u64 rest = frac & ((1ull << drop) - 1), half = 1ull << (drop - 1);
      if (rest > half || (rest == half && (kept & 1u))) ++kept;
      lead = kept >> (52 - drop);
      frac = (kept << drop) & ((1ull << 52) - 1);
    }
  }
  char dig[13];
  for (int i = 0; i < 13; ++i) {
    gpuio_u32 v = (gpuio_u32)(frac >> (48 - 4 * i)) & 0xfu;
    dig[i] = (char)(v < 10 ? '0' + v : (upper ? 'A' : 'a') + (v - 10));
  }
  gpuio_u64 aexp = (gpuio_u64)(exp < 0 ? -exp : exp);
  char ed[8];
  int ne = 0;
  do {
    ed[ne++] = (char)('0' + aexp % 10);
    aexp /= 10;
  } while (aexp != 0);
  int point = nh > 0 || (sp->flags & GPUIO_FMT_ALT);
  gpuio_i64 len = (sign ? 1 : 0) + 3 + point + nh + 2 + ne;
  int zero_pad = (sp->flags & (GPUIO_FMT_ZERO | GPUIO_FMT_MINUS)) == GPUIO_FMT_ZERO;
  if (!zero_pad) gpuio_fmt_pad(s, sp, len, 1);
  if (sign) gpuio_fmt_putc(s, sign);
  gpuio_fmt_putc(s, '0');
  gpuio_fmt_putc(s, upper ? 'X' : 'x');
  if (zero_pad) gpuio_fmt_fill(s, '0', sp->width - len);
  gpuio_fmt_putc(s, (char)('0' + lead));
  if (point) gpuio_fmt_putc(s, '.');
  gpuio_fmt_digits(s, dig, 13, 0, nh);
  gpuio_fmt_putc(s, upper ? 'P' : 'p');
  gpuio_fmt_putc(s, exp < 0 ? '-' : '+');
  while (ne > 0) gpuio_fmt_putc(s, ed[--ne]);
  gpuio_fmt_pad(s, sp, len, 0);
}

/* f F e E g G a A of the double with these bits. */
GPUIO_FN void gpuio_fmt_float(gpuio_fmt_sink *s, const gpuio_fmt_spec *sp, gpuio_u64 bits) {
  char conv = sp->conv;
  int upper = conv == 'F' || conv == 'E' || conv == 'G' || conv == 'A';
  char c = (char)(conv | 0x20); /* f e g a */
  gpuio_u32 be = (gpuio_u32)(bits >> 52) & 0x7ffu;
  gpuio_u64 frac = bits & ((1ull << 52) - 1);
  char sign = (bits >> 63) ? '-' : (sp->flags & GPUIO_FMT_PLUS) ? '+' : (sp->flags & GPUIO_FMT_SPACE) ? ' ' : 0;
  if (be == 0x7ffu) {
    char t[4] = {sign, 0, 0, 0};
    int o = sign ? 1 : 0;
    const char *w = frac != 0 ? (upper ? "NAN" : "nan") : (upper ? "INF" : "inf");
    for (int i = 0; i < 3; ++i) t[o + i] = w[i];
    gpuio_fmt_padded(s, sp, t, o + 3);
    return;
  }
  if (c == 'a') {
    gpuio_fmt_hexfloat(s, sp, bits, sign, upper);
    return;
  }
  char d[GPUIO_FMT_DIGITS];
  gpuio_i64 nd = 0, pt = 1;
  if (be != 0 || frac != 0)
    nd = gpuio_fmt_exact(be != 0 ? frac | (1ull << 52) : frac, be != 0 ? (int)be - 1075 : -1074, d, &pt);
  gpuio_i64 p = sp->prec < 0 ? 6 : sp->prec;
  int alt = (sp->flags & GPUIO_FMT_ALT) != 0, estyle;
  gpuio_i64 nf; /* digits after the point */
  if (c == 'f') {
    gpuio_fmt_round(d, &nd, &pt, pt + p);
    estyle = 0;
    nf = p;
  } else if (c == 'e') {
    gpuio_fmt_round(d, &nd, &pt, p + 1);
    estyle = 1;
    nf = p;
  } else { /* g: style from the exponent X after rounding to p significant digits */
    if (p == 0) p = 1;
    gpuio_i64 x0 = pt - 1;
    gpuio_fmt_round(d, &nd, &pt, p);
    gpuio_i64 x = pt - 1;
    estyle = !(x < p && x >= -4);
    if (estyle)
      /* glibc quirk: when the unrounded exponent chose f-style with all p digits
       * before the point and rounding carried (999999.5 under %#g), glibc switches
       * to e-style but keeps no fraction digits: "1.e+06", where ISO C says
       * "1.00000e+06". Reproduced so the output stays byte-identical to glibc. */
      nf = alt && !(x0 == p - 1 && x == p) ? p - 1 : nd - 1;
    else
      nf = alt ? p - 1 - x : (nd - pt > 0 ? nd - pt : 0);
  }
  int point = nf > 0 || alt;
  gpuio_i64 x = nd > 0 ? pt - 1 : 0, ax = x < 0 ? -x : x;
  gpuio_i64 len = (sign ? 1 : 0) + point + nf;
  if (estyle)
    len += 1 + 2 + (ax >= 100 ? 3 : 2);
  else
    len += pt > 0 ? pt : 1;
  int zero_pad = (sp->flags & (GPUIO_FMT_ZERO | GPUIO_FMT_MINUS)) == GPUIO_FMT_ZERO;
  if (!zero_pad) gpuio_fmt_pad(s, sp, len, 1);
  if (sign) gpuio_fmt_putc(s, sign);
  if (zero_pad) gpuio_fmt_fill(s, '0', sp->width - len);
  if (estyle) {
    gpuio_fmt_putc(s, nd > 0 ? d[0] : '0');
    if (point) gpuio_fmt_putc(s, '.');
    gpuio_fmt_digits(s, d, nd, 1, 1 + nf);
    gpuio_fmt_putc(s, upper ? 'E' : 'e');
    gpuio_fmt_putc(s, x < 0 ? '-' : '+');
    if (ax >= 100) gpuio_fmt_putc(s, (char)('0' + ax / 100));
    gpuio_fmt_putc(s, (char)('0' + ax / 10 % 10));
    gpuio_fmt_putc(s, (char)('0' + ax % 10));
  } else {
    if (pt > 0)
      gpuio_fmt_digits(s, d, nd, 0, pt);
    else
      gpuio_fmt_putc(s, '0');
    if (point) gpuio_fmt_putc(s, '.');
    gpuio_fmt_digits(s, d, nd, pt, pt + nf);
  }
  gpuio_fmt_pad(s, sp, len, 0);
}

/* ------------------------------------------------------------------- arguments */

/* The next argument, or null when none is left. */
GPUIO_FN const gpuio_fmt_arg *gpuio_fmt_next(const gpuio_fmt_arg *args, int nargs, int *ai) {
  if (args == nullptr || *ai >= nargs) return nullptr;
  return &args[(*ai)++];
}

/* 64-bit value of an integer-class argument (INT, UINT, PTR, STR); zero otherwise. */
GPUIO_FN gpuio_u64 gpuio_fmt_bits_int(const gpuio_fmt_arg *a) {
  if (a == nullptr) return 0;
  switch (a->kind) {
  case GPUIO_ARG_INT:
  case GPUIO_ARG_UINT:
    return a->v.u;
  case GPUIO_ARG_PTR:
  case GPUIO_ARG_STR:
    return (gpuio_u64)a->v.p;
  default:
    return 0;
  }
}

/* Bits of a DOUBLE argument; +0.0 otherwise. */
GPUIO_FN gpuio_u64 gpuio_fmt_bits_double(const gpuio_fmt_arg *a) {
  return a != nullptr && a->kind == GPUIO_ARG_DOUBLE ? a->v.u : 0;
}

/* The int an argument read by * holds. */
GPUIO_FN gpuio_i64 gpuio_fmt_star(const gpuio_fmt_arg *args, int nargs, int *ai) {
  return (gpuio_i64)(gpuio_i32)(gpuio_u32)gpuio_fmt_bits_int(gpuio_fmt_next(args, nargs, ai));
}

/* Decimal digits at *pp, saturating at 2^31 (the output then overflows int: -1). */
GPUIO_FN gpuio_i64 gpuio_fmt_parse_num(const char **pp) {
  gpuio_i64 v = 0;
  const char *p = *pp;
  while (*p >= '0' && *p <= '9') {
    v = v * 10 + (*p - '0');
    if (v > 0x80000000ll) v = 0x80000000ll;
    ++p;
  }
  *pp = p;
  return v;
}

/* An unknown conversion, printed back the way glibc does: canonical flags, width and
 * precision as parsed (a * shows its value), no length modifier. */
GPUIO_FN void gpuio_fmt_unknown(gpuio_fmt_sink *s, const gpuio_fmt_spec *sp) {
  gpuio_u32 f = sp->flags;
  gpuio_fmt_putc(s, '%');
  if (f & GPUIO_FMT_ALT) gpuio_fmt_putc(s, '#');
  if (f & GPUIO_FMT_GROUP) gpuio_fmt_putc(s, '\'');
  if (f & GPUIO_FMT_PLUS)
    gpuio_fmt_putc(s, '+');
  else if (f & GPUIO_FMT_SPACE)
    gpuio_fmt_putc(s, ' ');
  if (f & GPUIO_FMT_MINUS) gpuio_fmt_putc(s, '-');
  if (f & GPUIO_FMT_ZERO) gpuio_fmt_putc(s, '0');
  if (f & GPUIO_FMT_I18N) gpuio_fmt_putc(s, 'I');
  for (int part = 0; part < 2; ++part) {
    gpuio_i64 v = part == 0 ? sp->width : sp->prec;
    if (part == 0 && v == 0) continue;
    if (part == 1) {
      if (v < 0) continue;
      gpuio_fmt_putc(s, '.');
    }
    char t[12];
    int n = 0;
    do {
      t[n++] = (char)('0' + v % 10);
      v /= 10;
    } while (v != 0);
    while (n > 0) gpuio_fmt_putc(s, t[--n]);
  }
  gpuio_fmt_putc(s, sp->conv);
}

/* Length modifiers, by the width of the promoted value they select. */
#define GPUIO_FMT_LEN_HH 1
#define GPUIO_FMT_LEN_H 2
#define GPUIO_FMT_LEN_INT 4
#define GPUIO_FMT_LEN_64 8

GPUIO_NOINLINE int gpuio_vformat(char *out, gpuio_u64 cap, const char *fmt, const gpuio_fmt_arg *args, int nargs) {
  gpuio_fmt_sink s;
  s.out = out;
  s.cap = out != nullptr ? cap : 0;
  s.pos = 0;
  int ai = 0;
  const char *p = fmt != nullptr ? fmt : "";
  while (*p != 0) {
    if (*p != '%') {
      const char *q = p;
      while (*q != 0 && *q != '%') ++q;
      gpuio_fmt_write(&s, p, q - p);
      p = q;
      continue;
    }
    const char *start = p++;
    gpuio_fmt_spec sp;
    sp.flags = 0;
    sp.width = 0;
    sp.prec = -1;
    for (;; ++p) {
      if (*p == '-')
        sp.flags |= GPUIO_FMT_MINUS;
      else if (*p == '+')
        sp.flags |= GPUIO_FMT_PLUS;
      else if (*p == ' ')
        sp.flags |= GPUIO_FMT_SPACE;
      else if (*p == '#')
        sp.flags |= GPUIO_FMT_ALT;
      else if (*p == '0')
        sp.flags |= GPUIO_FMT_ZERO;
      else if (*p == '\'')
        sp.flags |= GPUIO_FMT_GROUP;
      else if (*p == 'I')
        sp.flags |= GPUIO_FMT_I18N;
      else
        break;
    }
    /* glibc drops 0 when - is a flag (not when - comes from a negative * width,
     * which only shows in how an unknown directive is printed back) */
    if (sp.flags & GPUIO_FMT_MINUS) sp.flags &= ~GPUIO_FMT_ZERO;
    if (*p == '*') {
      ++p;
      gpuio_i64 w = gpuio_fmt_star(args, nargs, &ai);
      if (w < 0) {
        sp.flags |= GPUIO_FMT_MINUS;
        w = -w;
      }
      sp.width = w;
    } else {
      sp.width = gpuio_fmt_parse_num(&p);
    }
    if (*p == '.') {
      ++p;
      if (*p == '*') {
        ++p;
        gpuio_i64 v = gpuio_fmt_star(args, nargs, &ai);
        sp.prec = v < 0 ? -1 : v;
      } else {
        sp.prec = gpuio_fmt_parse_num(&p);
      }
    }
    int len = GPUIO_FMT_LEN_INT, wide = 0;
    if (*p == 'h') {
      ++p;
      len = GPUIO_FMT_LEN_H;
      if (*p == 'h') {
        ++p;
        len = GPUIO_FMT_LEN_HH;
      }
    } else if (*p == 'l') {
      ++p;
      len = GPUIO_FMT_LEN_64;
      if (*p == 'l')
        ++p;
      else
        wide = 1; /* %lc, %ls */
    } else if (*p == 'L' || *p == 'q' || *p == 'j' || *p == 'z' || *p == 'Z' || *p == 't') {
      ++p;
      len = GPUIO_FMT_LEN_64;
    }
    sp.conv = *p;
    if (sp.conv == 0) { /* incomplete directive at the end: copy it */
      gpuio_fmt_write(&s, start, p - start);
      break;
    }
    ++p;
    switch (sp.conv) {
    case 'd':
    case 'i': {
      gpuio_u64 u = gpuio_fmt_bits_int(gpuio_fmt_next(args, nargs, &ai));
      gpuio_i64 v = len == GPUIO_FMT_LEN_HH  ? (gpuio_i64)(signed char)(gpuio_u8)u
                    : len == GPUIO_FMT_LEN_H ? (gpuio_i64)(short)(gpuio_u16)u
                    : len == GPUIO_FMT_LEN_INT ? (gpuio_i64)(gpuio_i32)(gpuio_u32)u
                                               : (gpuio_i64)u;
      char sign = v < 0 ? '-' : (sp.flags & GPUIO_FMT_PLUS) ? '+' : (sp.flags & GPUIO_FMT_SPACE) ? ' ' : 0;
      gpuio_fmt_integer(&s, &sp, v < 0 ? 0 - (gpuio_u64)v : (gpuio_u64)v, sign, 10, 0, "", 0);
      break;
    }
    case 'u':
    case 'o':
    case 'x':
    case 'X':
    case 'b':
    case 'B': {
      gpuio_u64 u = gpuio_fmt_bits_int(gpuio_fmt_next(args, nargs, &ai));
      if (len == GPUIO_FMT_LEN_HH)
        u &= 0xffu;
      else if (len == GPUIO_FMT_LEN_H)
        u &= 0xffffu;
      else if (len == GPUIO_FMT_LEN_INT)
        u &= 0xffffffffu;
      char c = sp.conv;
      gpuio_u32 base = c == 'u' ? 10 : c == 'o' ? 8 : (c == 'b' || c == 'B') ? 2 : 16;
      int prefixed = (base == 16 || base == 2) && (sp.flags & GPUIO_FMT_ALT) && u != 0;
      const char *prefix = c == 'X' ? "0X" : c == 'x' ? "0x" : c == 'B' ? "0B" : "0b";
      gpuio_fmt_integer(&s, &sp, u, 0, base, c == 'X', prefix, prefixed ? 2 : 0);
      break;
    }
    case 'p': {
      gpuio_u64 u = gpuio_fmt_bits_int(gpuio_fmt_next(args, nargs, &ai));
      if (u == 0) {
        gpuio_fmt_padded(&s, &sp, "(nil)", 5);
      } else {
        char sign = (sp.flags & GPUIO_FMT_PLUS) ? '+' : (sp.flags & GPUIO_FMT_SPACE) ? ' ' : 0;
        gpuio_fmt_integer(&s, &sp, u, sign, 16, 0, "0x", 2);
      }
      break;
    }
    case 'c': {
      char ch = (char)(gpuio_u8)gpuio_fmt_bits_int(gpuio_fmt_next(args, nargs, &ai));
      gpuio_fmt_padded(&s, &sp, &ch, 1);
      break;
    }
    case 's': {
      const gpuio_fmt_arg *a = gpuio_fmt_next(args, nargs, &ai);
      if (wide) { /* wchar_t strings are not supported */
        gpuio_fmt_write(&s, start, p - start);
        break;
      }
      const char *str = nullptr;
      if (a != nullptr && (a->kind == GPUIO_ARG_STR || a->kind == GPUIO_ARG_PTR)) str = (const char *)a->v.p;
      gpuio_i64 n = 0;
      if (str == nullptr) {
        str = sp.prec < 0 || sp.prec >= 6 ? "(null)" : "";
        while (str[n] != 0) ++n;
      } else {
        while ((sp.prec < 0 || n < sp.prec) && str[n] != 0) ++n;
      }
      gpuio_fmt_padded(&s, &sp, str, n);
      break;
    }
    case 'f':
    case 'F':
    case 'e':
    case 'E':
    case 'g':
    case 'G':
    case 'a':
    case 'A':
      gpuio_fmt_float(&s, &sp, gpuio_fmt_bits_double(gpuio_fmt_next(args, nargs, &ai)));
      break;
    case 'n':
      gpuio_fmt_next(args, nargs, &ai);
      break;
    case '%':
      gpuio_fmt_putc(&s, '%');
      break;
    default:
      gpuio_fmt_unknown(&s, &sp);
      break;
    }
  }
  if (s.cap > 0) s.out[s.pos < s.cap ? s.pos : s.cap - 1] = 0;
  return s.pos > 0x7fffffffull ? -1 : (int)s.pos;
}

/* Formats its arguments (each packed with gpuio_make_arg) like snprintf. */
template <typename... A> GPUIO_FN int gpuio_snprintf(char *out, gpuio_u64 cap, const char *fmt, A... a) {
  gpuio_fmt_arg args[sizeof...(A) + 1] = {gpuio_make_arg(a)...};
  return gpuio_vformat(out, cap, fmt, args, (int)sizeof...(A));
}

#endif /* GPUIO_PRINTF_H */
