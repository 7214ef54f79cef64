//! The device printf (`gpuio/printf.h`, compiled as host C++ into the CPU device via
//! `cpu/printf_shim.cpp`) must print exactly what the host C library's `snprintf`
//! prints: the same bytes, the same return value, the same truncation.
//!
//! Every comparison calls `libc::snprintf` with the arguments in their real C types
//! (after the default promotions) and `gpuio_vformat` with the same values packed as
//! `gpuio_fmt_arg`s.

use std::ffi::{c_char, c_int, c_long, c_longlong, c_uint, c_ulong, c_ulonglong, c_void, CString};
use std::ptr;

// The CPU device library (which holds the shim) is linked through this crate.
use gpuio_device as _;

const ARG_INT: u32 = 1;
const ARG_UINT: u32 = 2;
const ARG_DOUBLE: u32 = 3;
const ARG_PTR: u32 = 4;
const ARG_STR: u32 = 5;

/// `gpuio_fmt_arg`: kind, padding, then the 8-byte union.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct FmtArg {
    kind: u32,
    pad: u32,
    bits: u64,
}

extern "C" {
    fn gpuio_test_vformat(
        out: *mut c_char,
        cap: u64,
        fmt: *const c_char,
        args: *const FmtArg,
        nargs: c_int,
    ) -> c_int;
    fn gpuio_test_snprintf_noargs(out: *mut c_char, cap: u64, fmt: *const c_char) -> c_int;
    fn gpuio_test_snprintf_typed(
        out: *mut c_char,
        cap: u64,
        fmt: *const c_char,
        text: *mut c_char,
        ptr: *mut c_void,
        iptr: *const c_int,
    ) -> c_int;
    fn gpuio_test_make_arg_kinds(out: *mut FmtArg, n: c_int) -> c_int;
}

/// One argument as the C caller would pass it (its type after promotion).
#[derive(Clone, Debug)]
enum Arg {
    Int(c_int),
    UInt(c_uint),
    Long(c_long),
    ULong(c_ulong),
    LongLong(c_longlong),
    ULongLong(c_ulonglong),
    Double(f64),
    /// `const char *`; `None` is a null pointer.
    Str(Option<CString>),
    /// `void *` (never dereferenced).
    Ptr(usize),
}

impl Arg {
    fn fmt_arg(&self) -> FmtArg {
        let (kind, bits) = match self {
            Arg::Int(v) => (ARG_INT, i64::from(*v) as u64),
            Arg::UInt(v) => (ARG_UINT, u64::from(*v)),
            Arg::Long(v) => (ARG_INT, *v as u64),
            Arg::ULong(v) => (ARG_UINT, *v),
            Arg::LongLong(v) => (ARG_INT, *v as u64),
            Arg::ULongLong(v) => (ARG_UINT, *v),
            Arg::Double(v) => (ARG_DOUBLE, v.to_bits()),
            Arg::Str(s) => (ARG_STR, s.as_ref().map_or(0, |s| s.as_ptr() as u64)),
            Arg::Ptr(v) => (ARG_PTR, *v as u64),
        };
        FmtArg { kind, pad: 0, bits }
    }

    /// The value in its C type; pointers stay valid while `self` lives.
    fn c_arg(&self) -> CArg {
        match self {
            Arg::Int(v) => CArg::Int(*v),
            Arg::UInt(v) => CArg::UInt(*v),
            Arg::Long(v) => CArg::Long(*v),
            Arg::ULong(v) => CArg::ULong(*v),
            Arg::LongLong(v) => CArg::Long(*v),
            Arg::ULongLong(v) => CArg::ULong(*v),
            Arg::Double(v) => CArg::Double(*v),
            Arg::Str(s) => CArg::Str(s.as_ref().map_or(ptr::null(), |s| s.as_ptr())),
            Arg::Ptr(v) => CArg::Ptr(*v as *const c_void),
        }
    }
}

/// The distinct Rust types C variadic arguments take here (`long` and `long long`
/// are both `i64`).
#[derive(Clone, Copy)]
enum CArg {
    Int(c_int),
    UInt(c_uint),
    Long(i64),
    ULong(u64),
    Double(f64),
    Str(*const c_char),
    Ptr(*const c_void),
}

/// Types that may be passed through C `...` unchanged.
trait VarArg: Copy {}
impl VarArg for c_int {}
impl VarArg for c_uint {}
impl VarArg for i64 {}
impl VarArg for u64 {}
impl VarArg for f64 {}
impl VarArg for *const c_char {}
impl VarArg for *const c_void {}

/// A continuation receiving one more argument in its static type.
trait Cont {
    /// # Safety
    /// The `Host` inside must describe a valid call (see `Host`).
    unsafe fn call<T: VarArg>(self, t: T) -> c_int;
}

impl CArg {
    /// # Safety
    /// As `Cont::call`.
    unsafe fn pass<K: Cont>(self, k: K) -> c_int {
        // SAFETY: forwarded from the caller.
        unsafe {
            match self {
                CArg::Int(v) => k.call(v),
                CArg::UInt(v) => k.call(v),
                CArg::Long(v) => k.call(v),
                CArg::ULong(v) => k.call(v),
                CArg::Double(v) => k.call(v),
                CArg::Str(v) => k.call(v),
                CArg::Ptr(v) => k.call(v),
            }
        }
    }
}

/// A pending `snprintf(out, cap, fmt, ...)`: `out` is null with `cap == 0` or valid
/// for `cap` bytes, `fmt` is NUL-terminated, and the arguments match its conversions.
#[derive(Clone, Copy)]
struct Host {
    out: *mut c_char,
    cap: usize,
    fmt: *const c_char,
}

struct Call1(Host);
impl Cont for Call1 {
    unsafe fn call<A: VarArg>(self, a: A) -> c_int {
        // SAFETY: the caller guarantees `Host` describes a valid call.
        unsafe { libc::snprintf(self.0.out, self.0.cap, self.0.fmt, a) }
    }
}
struct Call2(Host, CArg);
impl Cont for Call2 {
    unsafe fn call<A: VarArg>(self, a: A) -> c_int {
        // SAFETY: forwarded from the caller.
        unsafe { self.1.pass(Call2b(self.0, a)) }
    }
}
struct Call2b<A>(Host, A);
impl<A: VarArg> Cont for Call2b<A> {
    unsafe fn call<B: VarArg>(self, b: B) -> c_int {
        // SAFETY: the caller guarantees `Host` describes a valid call.
        unsafe { libc::snprintf(self.0.out, self.0.cap, self.0.fmt, self.1, b) }
    }
}
struct Call3(Host, CArg, CArg);
impl Cont for Call3 {
    unsafe fn call<A: VarArg>(self, a: A) -> c_int {
        // SAFETY: forwarded from the caller.
        unsafe { self.1.pass(Call3b(self.0, a, self.2)) }
    }
}
struct Call3b<A>(Host, A, CArg);
impl<A: VarArg> Cont for Call3b<A> {
    unsafe fn call<B: VarArg>(self, b: B) -> c_int {
        // SAFETY: forwarded from the caller.
        unsafe { self.2.pass(Call3c(self.0, self.1, b)) }
    }
}
struct Call3c<A, B>(Host, A, B);
impl<A: VarArg, B: VarArg> Cont for Call3c<A, B> {
    unsafe fn call<C: VarArg>(self, c: C) -> c_int {
        // SAFETY: the caller guarantees `Host` describes a valid call.
        unsafe { libc::snprintf(self.0.out, self.0.cap, self.0.fmt, self.1, self.2, c) }
    }
}

/// A format and its arguments.
#[derive(Clone, Debug)]
struct Case {
    fmt: String,
    args: Vec<Arg>,
}

fn case(fmt: &str, args: Vec<Arg>) -> Case {
    Case {
        fmt: fmt.to_string(),
        args,
    }
}

fn s(text: &str) -> Arg {
    Arg::Str(Some(CString::new(text).unwrap()))
}

/// Bytes past `cap` in every output buffer, which must stay untouched.
const CANARY_LEN: usize = 16;
const CANARY: c_char = 0x5a;

/// What one formatter produced into a buffer of `cap` bytes plus the canary.
#[derive(PartialEq, Debug)]
struct Output {
    ret: c_int,
    buf: Vec<u8>,
}

impl Output {
    fn show(&self) -> String {
        format!("ret {} buf \"{}\"", self.ret, self.buf.escape_ascii())
    }
}

fn host_format(c: &Case, cap: usize) -> Output {
    let fmt = CString::new(c.fmt.as_str()).unwrap();
    let args: Vec<CArg> = c.args.iter().map(Arg::c_arg).collect();
    let mut buf = vec![CANARY; cap + CANARY_LEN];
    let h = Host {
        out: buf.as_mut_ptr(),
        cap,
        fmt: fmt.as_ptr(),
    };
    // SAFETY: `buf` holds `cap` (+ canary) bytes, `fmt` is NUL-terminated, and every
    // case passes exactly the arguments its conversions read, in their C types; the
    // string pointers borrow from `c`, which outlives the call.
    let ret = unsafe {
        match args.as_slice() {
            [] => libc::snprintf(h.out, h.cap, h.fmt),
            [a] => a.pass(Call1(h)),
            [a, b] => a.pass(Call2(h, *b)),
            [a, b, c] => a.pass(Call3(h, *b, *c)),
            _ => panic!("cases take at most 3 arguments: {c:?}"),
        }
    };
    Output {
        ret,
        buf: buf.iter().map(|&b| b as u8).collect(),
    }
}

fn gpuio_format(c: &Case, cap: usize) -> Output {
    let fmt = CString::new(c.fmt.as_str()).unwrap();
    let args: Vec<FmtArg> = c.args.iter().map(Arg::fmt_arg).collect();
    let mut buf = vec![CANARY; cap + CANARY_LEN];
    // SAFETY: `buf` is valid for `cap` bytes, `fmt` is NUL-terminated, `args` holds
    // `args.len()` entries whose string pointers borrow from `c`.
    let ret = unsafe {
        gpuio_test_vformat(
            buf.as_mut_ptr(),
            cap as u64,
            fmt.as_ptr(),
            args.as_ptr(),
            args.len() as c_int,
        )
    };
    Output {
        ret,
        buf: buf.iter().map(|&b| b as u8).collect(),
    }
}

/// Compares one case at full size and at the given truncating caps; returns a
/// description of the first difference.
fn check(c: &Case, caps: &[usize]) -> Result<(), String> {
    let needed = host_format(c, 0).ret;
    if needed < 0 {
        return Err(format!("host snprintf failed on {c:?}"));
    }
    let full = needed as usize + 1;
    for &cap in std::iter::once(&full).chain(caps) {
        let host = host_format(c, cap);
        let ours = gpuio_format(c, cap);
        if host != ours {
            return Err(format!(
                "format \"{}\" args {:?} cap {cap}\n  host  {}\n  gpuio {}",
                c.fmt.escape_default(),
                c.args,
                host.show(),
                ours.show()
            ));
        }
        if ours.buf[cap..].iter().any(|&b| b != CANARY as u8) {
            return Err(format!("wrote past cap {cap}: {c:?}"));
        }
    }
    Ok(())
}

/// Checks every case (full size, and truncated to the caps `caps_for` picks) and
/// fails listing the first mismatches.
fn check_all(cases: &[Case], mut caps_for: impl FnMut(usize) -> Vec<usize>) {
    let mut failures = Vec::new();
    for c in cases {
        let needed = host_format(c, 0).ret.max(0) as usize;
        if let Err(e) = check(c, &caps_for(needed)) {
            failures.push(e);
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases differ from the host snprintf; first ones:\n{}",
        failures.len(),
        cases.len(),
        failures[..failures.len().min(25)].join("\n")
    );
}

/// splitmix64: a deterministic generator, so a failure reproduces.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn one_in(&mut self, n: u64) -> bool {
        self.below(n) == 0
    }
    /// Uniform in `lo..=hi`.
    fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + self.below((hi - lo + 1) as u64) as i64
    }
    fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len() as u64) as usize]
    }
}

/// Integers with many edge values: boundaries of every width, small numbers, and
/// random bit patterns of random magnitude and sign.
fn gen_bits(rng: &mut Rng) -> u64 {
    const EDGES: [u64; 16] = [
        0,
        1,
        u64::MAX,
        0x7f,
        0x80,
        0xff,
        0x100,
        0x7fff,
        0x8000,
        0xffff,
        0x7fff_ffff,
        0x8000_0000,
        0xffff_ffff,
        0x1_0000_0000,
        0x7fff_ffff_ffff_ffff,
        0x8000_0000_0000_0000,
    ];
    match rng.below(5) {
        0 => rng.below(21),
        1 => rng.pick(&EDGES).wrapping_add(rng.range(-1, 1) as u64),
        2 => rng.next() >> rng.below(64),
        3 => (rng.next() >> rng.below(64)).wrapping_neg(),
        _ => rng.next(),
    }
}

/// Doubles across the whole range, weighted toward the hard ones: subnormals,
/// exact binary fractions (halfway cases), decimal-looking values, values just
/// below a power of ten (rounding carries), and specials.
fn gen_double(rng: &mut Rng) -> f64 {
    let sign = if rng.one_in(3) { -1.0 } else { 1.0 };
    match rng.below(8) {
        0 => f64::from_bits(rng.next()),
        1 => f64::from_bits(rng.below(1 << 52) | (rng.below(2) << 63)),
        2 => sign * (rng.range(0, 2_000_000) as f64) / (1u64 << rng.below(12)) as f64,
        3 => sign * (rng.range(0, 999_999) as f64) * 10f64.powi(rng.range(-30, 30) as i32),
        4 => {
            let k = rng.range(1, 17) as i32;
            let v = 10f64.powi(k) - (rng.range(0, 9) as f64) * rng.pick(&[0.5, 0.05, 0.005]);
            sign * v * 10f64.powi(rng.range(-25, 10) as i32)
        }
        5 => {
            let e = rng.range(-1074, 1023);
            sign * 2f64.powi(e as i32) * (1.0 + rng.below(1 << 20) as f64 / (1u64 << 20) as f64)
        }
        6 => rng.pick(&[
            0.0,
            -0.0,
            0.5,
            1.5,
            2.5,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            -f64::NAN,
            f64::MAX,
            f64::MIN_POSITIVE,
            f64::from_bits(1),
            f64::from_bits(0x000f_ffff_ffff_ffff),
            f64::EPSILON,
        ]),
        _ => {
            sign * f64::from_bits(
                0x3ff0_0000_0000_0000 + (rng.below(200) << 52) - (100 << 52) + rng.below(1 << 52),
            )
        }
    }
}

fn gen_text(rng: &mut Rng, max: u64) -> String {
    const CHARS: &[u8] = b"abcXYZ019 -=:,.()[]{}\t\n\\\"'#*";
    (0..rng.below(max + 1))
        .map(|_| CHARS[rng.below(CHARS.len() as u64) as usize] as char)
        .collect()
}

/// One directive with its arguments (`*` widths and precisions included when
/// `star` allows).
fn gen_directive(rng: &mut Rng, star: bool) -> (String, Vec<Arg>) {
    let mut conv = rng.pick(&[
        'd', 'i', 'u', 'o', 'x', 'X', 'b', 'B', 'c', 's', 'p', 'f', 'F', 'e', 'E', 'g', 'G', 'a',
        'A', '%', 'f', 'e', 'g', 'd', 'x', 'y',
    ]);
    if "bB".contains(conv) && !host_has_binary() {
        conv = 'x';
    }
    let float = "fFeEgGaA".contains(conv);
    let mut fmt = String::from("%");
    let mut args = Vec::new();
    for _ in 0..rng.below(4) {
        fmt.push(rng.pick(&['-', '+', ' ', '#', '0']));
    }
    match rng.below(6) {
        0 | 1 => {}
        2 | 3 => fmt += &rng.below(25).to_string(),
        4 if rng.one_in(8) => fmt += &rng.range(100, 400).to_string(),
        _ if star => {
            fmt.push('*');
            args.push(Arg::Int(rng.range(-30, 30) as c_int));
        }
        _ => fmt += &rng.below(12).to_string(),
    }
    match rng.below(6) {
        0 | 1 => {}
        2 => fmt.push('.'),
        3 | 4 => {
            let p = if float {
                match rng.below(20) {
                    0..=13 => rng.below(21),
                    14..=17 => rng.range(21, 60) as u64,
                    18 => rng.range(61, 130) as u64,
                    _ => rng.range(300, 1100) as u64,
                }
            } else {
                rng.below(30)
            };
            fmt += &format!(".{p}");
        }
        _ if star => {
            fmt += ".*";
            args.push(Arg::Int(rng.range(-8, 40) as c_int));
        }
        _ => fmt += &format!(".{}", rng.below(8)),
    }
    let bits = gen_bits(rng);
    match conv {
        'd' | 'i' => {
            let len = rng.pick(&["", "", "hh", "h", "l", "ll", "j", "z", "t"]);
            fmt += len;
            args.push(match len {
                "" | "hh" | "h" => Arg::Int(bits as c_int),
                "ll" => Arg::LongLong(bits as c_longlong),
                _ => Arg::Long(bits as c_long),
            });
        }
        'u' | 'o' | 'x' | 'X' | 'b' | 'B' => {
            let len = rng.pick(&["", "", "hh", "h", "l", "ll", "j", "z", "t"]);
            fmt += len;
            args.push(match len {
                "" | "hh" | "h" => Arg::UInt(bits as c_uint),
                "ll" => Arg::ULongLong(bits as c_ulonglong),
                _ => Arg::ULong(bits as c_ulong),
            });
        }
        'c' => args.push(Arg::Int(bits as c_int)),
        's' => args.push(if rng.one_in(8) {
            Arg::Str(None)
        } else {
            s(&gen_text(rng, 24))
        }),
        'p' => args.push(Arg::Ptr(if rng.one_in(5) { 0 } else { bits as usize })),
        '%' | 'y' => {}
        _ => {
            if rng.one_in(6) {
                fmt.push('l'); // %lf is %f
            }
            args.push(Arg::Double(gen_double(rng)));
        }
    }
    fmt.push(conv);
    (fmt, args)
}

/// Whether the host C library knows C23's `%b` (glibc >= 2.35); cases using it are
/// left out where it does not.
fn host_has_binary() -> bool {
    let mut buf = [0 as c_char; 8];
    // SAFETY: 8-byte buffer; `%b` reads one unsigned int where supported, and an
    // unknown conversion reads nothing.
    let n = unsafe { libc::snprintf(buf.as_mut_ptr(), 8, c"%b".as_ptr(), 5 as c_uint) };
    n == 3 && buf[..3] == [b'1' as c_char, b'0' as c_char, b'1' as c_char]
}

/// Single directives (with `*` arguments) between random text, then sequences of
/// two or three directives that exercise walking the argument list.
fn generated_cases(seed: u64, singles: usize, sequences: usize) -> Vec<Case> {
    let mut rng = Rng(seed);
    let mut cases = Vec::new();
    for _ in 0..singles {
        let (d, args) = gen_directive(&mut rng, true);
        let fmt = format!("{}{d}{}", gen_text(&mut rng, 4), gen_text(&mut rng, 4));
        cases.push(Case { fmt, args });
    }
    for _ in 0..sequences {
        let mut fmt = gen_text(&mut rng, 3);
        let mut args = Vec::new();
        for _ in 0..rng.range(2, 3) {
            let (d, a) = gen_directive(&mut rng, false);
            fmt += &d;
            fmt += &gen_text(&mut rng, 3);
            args.extend(a);
        }
        cases.push(Case { fmt, args });
    }
    cases
}

#[test]
fn printf_matches_host_snprintf_on_generated_cases() {
    let cases = generated_cases(0x6770_7569_6f21, 4000, 1000);
    assert_eq!(cases.len(), 5000);
    let mut rng = Rng(7);
    check_all(&cases, |n| vec![0, 1, rng.below(n as u64 + 2) as usize]);
}

#[test]
fn printf_edge_cases_match_glibc() {
    use Arg::{Double as D, Int as I, Ptr as P, Str, UInt as U};
    let mut cases = vec![
        // length modifiers truncate the promoted value exactly as C does
        case("%hhd %hhd %hhu", vec![I(300), I(-129), I(300)]),
        case("%hhx|%hhx", vec![I(-1), I(255)]),
        case("%hx %hd %hu", vec![I(-1), I(70000), I(-1)]),
        case(
            "%ld %lu %lx",
            vec![
                Arg::Long(i64::MIN),
                Arg::ULong(u64::MAX),
                Arg::ULong(0xdead_beef_cafe),
            ],
        ),
        case(
            "%lld|%llu|%llo",
            vec![
                Arg::LongLong(i64::MAX),
                Arg::ULongLong(u64::MAX),
                Arg::ULongLong(u64::MAX),
            ],
        ),
        case(
            "%zu %zd %jd",
            vec![
                Arg::ULong(usize::MAX as u64),
                Arg::Long(-5),
                Arg::Long(i64::MIN),
            ],
        ),
        case(
            "%td %ti %tx",
            vec![Arg::Long(-7), Arg::Long(7), Arg::ULong(7)],
        ),
        case("%d %i %d", vec![I(i32::MIN), I(i32::MAX), I(0)]),
        case("%u %o %X", vec![U(u32::MAX), U(u32::MAX), U(u32::MAX)]),
        // precision and flags on integers
        case("%.0d|%.0i|%5.0d|", vec![I(0), I(0), I(0)]),
        case("%+.0d|% .0d|%.0x", vec![I(0), I(0), U(0)]),
        case("%#o|%#.0o|%#x", vec![U(8), U(0), U(255)]),
        case("%#X|%#.0x|%#5o|", vec![U(255), U(0), U(0)]),
        case("%#.5x|%#08x|%#-8o|", vec![U(1), U(1), U(8)]),
        case("%-05d|%0-5d|%05.3d|", vec![I(3), I(3), I(-3)]),
        case("%-+0 #5d|% +d|%+ d", vec![I(5), I(3), I(3)]),
        case("%020.10d|%-20.10d|", vec![I(-42), I(42)]),
        case("%'d %Id", vec![I(1_234_567), I(12)]),
        // * width and precision, negative values
        case("%*d|", vec![I(5), I(1)]),
        case("%-*d|", vec![I(5), I(2)]),
        case("%*d|", vec![I(-5), I(3)]),
        case("%*d|", vec![I(0), I(4)]),
        case("%.*d|", vec![I(-1), I(0)]),
        case("%.*d|", vec![I(5), I(42)]),
        case("%-*.*d|", vec![I(8), I(5), I(-42)]),
        case("%*.*f", vec![I(12), I(3), D(12.345_678)]),
        case("%*.*f", vec![I(-12), I(-3), D(2.5)]),
        case("%.*s|", vec![I(3), s("abcdef")]),
        case("%.*s|", vec![I(-1), s("abcdef")]),
        // %c
        case("%c%c%c", vec![I(i32::from(b'a')), I(0), I(200)]),
        case("%05c|%-3c|%3c", vec![I(120), I(121), I(122)]),
        case("%c", vec![I(-56)]),
        // %s, including null
        case("%s|%.3s|%-6s", vec![s("Hi"), s("abcdef"), s("ab")]),
        case("%6s|%.10s|", vec![s("cd"), s("short")]),
        case("%s|%.5s|%.6s|", vec![Str(None), Str(None), Str(None)]),
        case("%.0s|%.*s|", vec![Str(None), I(-1), Str(None)]),
        case("%10.3s|%-10s|%010s|", vec![Str(None), Str(None), Str(None)]),
        case("%s", vec![s("")]),
        case("%05s|%-05s|", vec![s("ab"), s("ab")]),
        // %p exactly as glibc
        case("%p %p", vec![P(0), P(0x1234)]),
        case("%-10p|%10p|%.2p|", vec![P(0), P(0), P(0)]),
        case("%+p|% p|%.20p", vec![P(0xabc), P(0xabc), P(0xabc)]),
        case("%020p|%-20p|%#p", vec![P(0xabc), P(0xabc), P(0xabc)]),
        case("%p|%20p", vec![P(usize::MAX), P(0x7fff_dead_beef)]),
        // %%
        case("100%% %5% %-5%|%%", vec![]),
        // unknown conversions are printed back in glibc's canonical form
        case("%y|%5.3y|%-08.2y", vec![]),
        case("%+ y|% +y|%-0y|%0-y|%#'I+-05.3y", vec![]),
        case("%hhy|%.y|%0y|%lly|%5.0y|%0.0y|% y|%'y|%Iy|%#y", vec![]),
        case("%*.*y|", vec![I(-7), I(-2)]),
        case("%*.*y|", vec![I(7), I(2)]),
        case("%*y|%d", vec![I(3), I(42)]),
        // floats: halfway cases round half to even on the exact value
        case("%.0f %.0f %.0f", vec![D(0.5), D(1.5), D(2.5)]),
        case("%.0f %.0f %.0f", vec![D(3.5), D(-0.5), D(-2.5)]),
        case("%.1f %.1f %.1f", vec![D(0.25), D(0.35), D(0.45)]),
        case("%.2f %.2f %.3f", vec![D(1.005), D(1.125), D(1.0625)]),
        case("%.0e %.1e %.0e", vec![D(2.5), D(1.25), D(5e-324)]),
        case("%f %e %g", vec![D(0.0), D(0.0), D(0.0)]),
        case("%f %e %g", vec![D(-0.0), D(-0.0), D(-0.0)]),
        case("%a %A %.0a", vec![D(-0.0), D(0.0), D(0.0)]),
        case("%+f|% f|%+e", vec![D(0.0), D(0.0), D(-0.0)]),
        // inf and nan, lower and upper, signs and padding
        case(
            "%f %F %e",
            vec![D(f64::INFINITY), D(f64::INFINITY), D(f64::NEG_INFINITY)],
        ),
        case(
            "%E %g %G",
            vec![D(f64::NEG_INFINITY), D(f64::NAN), D(f64::NAN)],
        ),
        case("%f %F %a", vec![D(-f64::NAN), D(-f64::NAN), D(-f64::NAN)]),
        case(
            "%05f|%-6f|%+f",
            vec![D(f64::INFINITY), D(f64::NAN), D(f64::NAN)],
        ),
        case(
            "%010.3e|% G|%+A",
            vec![D(-f64::NAN), D(f64::INFINITY), D(f64::NEG_INFINITY)],
        ),
        // # keeps the point and, for g, the trailing zeros
        case("%#.0f|%#.0e|%#g", vec![D(1.0), D(1.0), D(1.0)]),
        case("%#.0g|%#.3g|%#G", vec![D(1.0), D(0.0001), D(1e-10)]),
        case("%#g|%#.2g|%#.1g", vec![D(999_999.5), D(99.5), D(9.5)]),
        case(
            "%#g|%#.3g|%#.10g",
            vec![D(0.999_999_999), D(0.000_999_999_9), D(9.999_999_9e-5)],
        ),
        case("%#x|%#a|%#.0a", vec![U(0), D(1.0), D(1.0)]),
        // %g style boundaries (decided after rounding)
        case("%g %g %g", vec![D(100_000.0), D(1e6), D(999_999.4)]),
        case(
            "%g %g %g",
            vec![D(1e-4), D(9.999_995e-5), D(0.000_099_999_999)],
        ),
        case("%.0g %.1g %.2g", vec![D(9.96), D(9.96), D(9.96)]),
        case("%G %G %.3G", vec![D(1e-5), D(1.5e300), D(12345.0)]),
        // extremes
        case("%.17g|%.17g|%.17g", vec![D(0.1), D(f64::MAX), D(5e-324)]),
        case("%f", vec![D(1e308)]),
        case("%f", vec![D(f64::MAX)]),
        case(
            "%e|%.0e|%E",
            vec![D(f64::MAX), D(f64::MAX), D(f64::MIN_POSITIVE)],
        ),
        case("%.60f", vec![D(0.1)]),
        case("%.60e|%.60g", vec![D(1.0 / 3.0), D(2.0f64.sqrt())]),
        case("%.17e|%.20e|%.40e", vec![D(5e-324), D(5e-324), D(5e-324)]),
        case("%.330f", vec![D(f64::MAX)]),
        case("%.1074f", vec![D(5e-324)]),
        case("%.1100f", vec![D(5e-324)]),
        case("%.767e", vec![D(f64::from_bits(0x000f_ffff_ffff_ffff))]),
        case("%.1100e", vec![D(f64::from_bits(0x000f_ffff_ffff_ffff))]),
        case("%.1200g|%#.20g", vec![D(f64::MIN_POSITIVE), D(0.5)]),
        case("%.2000f", vec![D(-f64::MAX)]),
        case("%300.200e|%-300.3g|", vec![D(1.0), D(2.0)]),
        // %a
        case("%a %a %a", vec![D(1.0), D(0.1), D(5e-324)]),
        case(
            "%.0a %.0a %.1a",
            vec![D(1.5), D(2.5), D(f64::from_bits(0x3fff_8000_0000_0000))],
        ),
        case(
            "%.3a|%.20a|%012a",
            vec![D(f64::from_bits(0x3fff_ffff_f000_0000)), D(0.1), D(1.0)],
        ),
        case(
            "%A|%-12a|%+.2A",
            vec![D(f64::MAX), D(-2.0), D(f64::MIN_POSITIVE)],
        ),
    ];
    if host_has_binary() {
        cases.extend([
            case("%b|%B|%#B|", vec![U(5), U(0), U(5)]),
            case("%#b|%#.0b|%#010b|", vec![U(0), U(0), U(6)]),
            case(
                "%llb|%hhb|%-12.8b|",
                vec![Arg::ULongLong(u64::MAX), U(0x1ff), U(9)],
            ),
        ]);
    }
    // Every nasty value under every float format.
    let values = [
        0.0,
        -0.0,
        0.5,
        1.5,
        2.5,
        -2.5,
        1e308,
        f64::MAX,
        5e-324,
        -5e-324,
        f64::MIN_POSITIVE,
        f64::from_bits(0x000f_ffff_ffff_ffff),
        0.1,
        1.0 / 3.0,
        123_456_789.125,
        9.999_999_9,
        999_999.5,
        0.000_123_456,
        1e-5,
        1e16,
        2e22,
        1e21,
        4.35,
        0.15,
        0.05,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        -f64::NAN,
    ];
    let formats = [
        "%f", "%.0f", "%.1f", "%.60f", "%e", "%.0e", "%.60e", "%g", "%.17g", "%.0g", "%#g",
        "%#.0f", "%#.0e", "%.60g", "%#.60g", "%a", "%.0a", "%.3a", "%+010.3f", "%-12.3e|",
        "% 012g", "%012a", "%G", "%E", "%F", "%A", "%#.3g", "%.320f",
    ];
    for v in values {
        for f in formats {
            cases.push(case(f, vec![D(v)]));
        }
    }
    assert!(cases.len() > 800);
    check_all(&cases, |n| vec![0, 1, n / 2, n]);
}

#[test]
fn printf_never_writes_past_cap_and_truncates_like_snprintf() {
    let c = case(
        "%s=%08.3f (%-6d)",
        vec![s("value"), Arg::Double(-12.345_67), Arg::Int(42)],
    );
    let caps: Vec<usize> = (0..40).collect();
    check(&c, &caps).unwrap();
    // The full length is reported whatever the cap, and cap 0 touches nothing.
    let fmt = CString::new(c.fmt.as_str()).unwrap();
    let args: Vec<FmtArg> = c.args.iter().map(Arg::fmt_arg).collect();
    let full = "value=-012.346 (42    )";
    // SAFETY: cap 0 with a null buffer writes nothing; `fmt` and `args` are valid.
    let n = unsafe { gpuio_test_vformat(ptr::null_mut(), 0, fmt.as_ptr(), args.as_ptr(), 3) };
    assert_eq!(n as usize, full.len());
    for cap in [0usize, 1, 2, 10, full.len(), full.len() + 1, 100] {
        let mut buf = [CANARY; 128];
        // SAFETY: `buf` is 128 bytes, more than any cap used here.
        let r = unsafe {
            gpuio_test_vformat(buf.as_mut_ptr(), cap as u64, fmt.as_ptr(), args.as_ptr(), 3)
        };
        assert_eq!(r as usize, full.len(), "cap {cap}");
        let written = cap.min(full.len() + 1);
        let text: Vec<u8> = buf[..written.saturating_sub(1)]
            .iter()
            .map(|&b| b as u8)
            .collect();
        assert_eq!(
            text,
            full.as_bytes()[..written.saturating_sub(1)],
            "cap {cap}"
        );
        assert!(
            buf[written..].iter().all(|&b| b == CANARY),
            "cap {cap}: wrote past it"
        );
        if cap > 0 {
            assert_eq!(buf[written - 1], 0, "cap {cap}: not NUL-terminated");
        }
    }
    // Huge padding is counted, not written.
    let wide = case(
        "%1000000d|%-1000000s|%.1000000f",
        vec![Arg::Int(1), s("x"), Arg::Double(0.5)],
    );
    check(&wide, &[0, 5, 64]).unwrap();
}

#[test]
fn printf_precision_bounds_how_far_a_string_is_read() {
    // No NUL anywhere: only `precision` bytes may be read.
    let bytes = [b'a', b'b', b'c', b'd'];
    let fmt = CString::new("[%.4s|%.2s|%-6.3s]").unwrap();
    let arg = FmtArg {
        kind: ARG_STR,
        pad: 0,
        bits: bytes.as_ptr() as u64,
    };
    let args = [arg, arg, arg];
    let mut buf = [0 as c_char; 64];
    // SAFETY: every %s has a precision no larger than the 4 readable bytes.
    let n = unsafe { gpuio_test_vformat(buf.as_mut_ptr(), 64, fmt.as_ptr(), args.as_ptr(), 3) };
    let out: Vec<u8> = buf[..n as usize].iter().map(|&b| b as u8).collect();
    assert_eq!(out, b"[abcd|ab|abc   ]");
}

#[test]
fn printf_missing_or_mismatched_arguments_read_as_zero() {
    let run = |fmt: &str, args: &[FmtArg]| -> String {
        let f = CString::new(fmt).unwrap();
        let mut buf = [0 as c_char; 256];
        // SAFETY: `buf` is 256 bytes; `args` holds `args.len()` entries with no
        // pointers that %s would read (STR/PTR entries are null or absent).
        let n = unsafe {
            gpuio_test_vformat(
                buf.as_mut_ptr(),
                256,
                f.as_ptr(),
                args.as_ptr(),
                args.len() as c_int,
            )
        };
        String::from_utf8(buf[..n as usize].iter().map(|&b| b as u8).collect()).unwrap()
    };
    let int = |v: i64| FmtArg {
        kind: ARG_INT,
        pad: 0,
        bits: v as u64,
    };
    let dbl = |v: f64| FmtArg {
        kind: ARG_DOUBLE,
        pad: 0,
        bits: v.to_bits(),
    };
    // Nothing left: zero values of each kind.
    assert_eq!(
        run("%d %x %c|%s %p %f %e %*d", &[]),
        "0 0 \0|(null) (nil) 0.000000 0.000000e+00 0"
    );
    assert_eq!(run("%d %d %d", &[int(7)]), "7 0 0");
    // A null argument array is the same as none.
    let f = CString::new("%d|%s").unwrap();
    let mut buf = [0 as c_char; 16];
    // SAFETY: a null `args` with nargs 0 is allowed; `buf` is 16 bytes.
    let n = unsafe { gpuio_test_vformat(buf.as_mut_ptr(), 16, f.as_ptr(), ptr::null(), 0) };
    assert_eq!(n, 8);
    // Integer conversions of a double, and float conversions of an integer, read 0.
    assert_eq!(
        run("%d %x|%f %g", &[dbl(2.5), dbl(2.5), int(3), int(3)]),
        "0 0|0.000000 0"
    );
    // %s never dereferences an integer; %p prints any integer-class value.
    assert_eq!(
        run("%s|%p|%p", &[int(0x1234), int(0x1234), dbl(1.0)]),
        "(null)|0x1234|(nil)"
    );
    // An unknown kind reads as zero too.
    let odd = FmtArg {
        kind: 99,
        pad: 0,
        bits: 5,
    };
    assert_eq!(run("%d %f %s", &[odd, odd, odd]), "0 0.000000 (null)");
    // Unsupported or incomplete directives are copied; %ls and %n consume their
    // argument, %ls is copied and %n stores nothing.
    assert_eq!(
        run("%1$d|%ls|%n|%d|100%", &[int(1), int(2), int(3)]),
        "%1$d|%ls||3|100%"
    );
    // A null format formats as "".
    // SAFETY: a null format is documented to format as the empty string.
    let n = unsafe { gpuio_test_vformat(buf.as_mut_ptr(), 16, ptr::null(), ptr::null(), 0) };
    assert_eq!((n, buf[0]), (0, 0));
}

#[test]
fn printf_variadic_template_packs_every_cpp_type_like_c_promotions() {
    let fmt =
        c"%c|%hhd|%hhu|%hd|%hu|%d|%u|%ld|%lu|%lld|%llu|%d|%d|%u|%lc|%f|%.17g|%s|%s|%p|%p|%p|%p|%p";
    let mut text = CString::new("mutable").unwrap().into_bytes_with_nul();
    let text_ptr = text.as_mut_ptr().cast::<c_char>();
    let object: c_int = 5;
    let vptr = 0xfeed_f00d_usize as *mut c_void;
    let mut ours = [0 as c_char; 512];
    let mut host = [0 as c_char; 512];
    // SAFETY: buffers are 512 bytes; the strings are NUL-terminated; the shim passes
    // exactly the values its comment lists, which `fmt` converts one by one.
    let n = unsafe {
        gpuio_test_snprintf_typed(
            ours.as_mut_ptr(),
            512,
            fmt.as_ptr(),
            text_ptr,
            vptr,
            &object,
        )
    };
    // SAFETY: the same values, in the C types they promote to.
    let m = unsafe {
        libc::snprintf(
            host.as_mut_ptr(),
            512,
            fmt.as_ptr(),
            c_int::from(b'x'),
            c_int::from(-5i8),
            c_int::from(250u8),
            c_int::from(-300i16),
            c_int::from(65000u16),
            -7 as c_int,
            c_uint::MAX - 294_967_295,
            -8 as c_long,
            18_000_000_000_000_000_000 as c_ulong,
            -9 as c_longlong,
            c_ulonglong::MAX,
            c_int::from(true),
            c_int::from(0x20acu16),
            0x1_f600 as c_uint,
            c_int::from(b'A'),
            1.5f64,
            0.1f64,
            c"literal".as_ptr(),
            text_ptr as *const c_char,
            vptr as *const c_void,
            vptr as *const c_void,
            ptr::from_ref(&object).cast::<c_void>(),
            ptr::null::<c_void>(),
            ptr::null::<c_void>(),
        )
    };
    let show = |b: &[c_char], n: c_int| {
        b[..n as usize]
            .iter()
            .map(|&c| c as u8 as char)
            .collect::<String>()
    };
    assert_eq!(show(&ours, n), show(&host, m));
    assert_eq!(n, m);
}

#[test]
fn printf_with_no_arguments_formats_the_literal_text() {
    for fmt in [
        c"",
        c"plain text",
        c"100%% done, %5% too",
        c"tab\tnewline\n",
    ] {
        let mut ours = [CANARY; 64];
        let mut host = [CANARY; 64];
        // SAFETY: 64-byte buffers; the formats take no arguments.
        let (n, m) = unsafe {
            (
                gpuio_test_snprintf_noargs(ours.as_mut_ptr(), 64, fmt.as_ptr()),
                libc::snprintf(host.as_mut_ptr(), 64, fmt.as_ptr()),
            )
        };
        assert_eq!((n, ours), (m, host), "{fmt:?}");
    }
}

#[test]
fn printf_make_arg_tags_each_type_with_its_promoted_kind() {
    let mut got = [FmtArg::default(); 32];
    // SAFETY: `got` has room for 32 entries and the shim copies at most that many.
    let n = unsafe { gpuio_test_make_arg_kinds(got.as_mut_ptr(), 32) } as usize;
    let want = [
        (ARG_INT, u64::MAX),               // signed char -1
        (ARG_INT, u64::MAX),               // short -1
        (ARG_INT, u64::MAX),               // int -1
        (ARG_INT, u64::MAX),               // long -1
        (ARG_INT, u64::MAX),               // long long -1
        (ARG_UINT, 255),                   // unsigned char
        (ARG_UINT, 65535),                 // unsigned short
        (ARG_UINT, 0xffff_ffff),           // unsigned int
        (ARG_UINT, u64::MAX),              // unsigned long
        (ARG_UINT, u64::MAX),              // unsigned long long
        (ARG_UINT, 1),                     // bool
        (ARG_DOUBLE, 2.5f64.to_bits()),    // float, widened
        (ARG_DOUBLE, (-2.5f64).to_bits()), // double
        (ARG_STR, got[13].bits),           // string literal (address checked below)
        (ARG_PTR, 16),                     // void *
        (ARG_PTR, 0),                      // nullptr
        (ARG_PTR, 32),                     // long *
        (ARG_INT, 65),                     // char (signed on this target)
    ];
    assert_eq!(n, want.len());
    assert_ne!(got[13].bits, 0);
    for (i, (kind, bits)) in want.iter().enumerate() {
        assert_eq!(
            (got[i].kind, got[i].pad, got[i].bits),
            (*kind, 0, *bits),
            "entry {i}"
        );
    }
}

/// Strips `/* */` and `//` comments, leaving only code.
fn code_of(src: &str) -> String {
    let mut out = String::new();
    let mut rest = src;
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix("/*") {
            rest = r.find("*/").map_or("", |i| &r[i + 2..]);
        } else if let Some(r) = rest.strip_prefix("//") {
            rest = r.find('\n').map_or("", |i| &r[i..]);
        } else {
            let c = rest.chars().next().unwrap();
            out.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    out
}

#[test]
fn printf_header_includes_nothing_and_compiles_without_any_include_path() {
    let include = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("include");
    let header = std::fs::read_to_string(include.join("gpuio/printf.h")).unwrap();
    let code = code_of(&header);
    for banned in ["#include", "long double"] {
        assert!(!code.contains(banned), "printf.h code uses `{banned}`");
    }
    let libc_names = [
        "va_list",
        "va_arg",
        "va_start",
        "malloc",
        "free",
        "alloca",
        "memcpy",
        "memset",
        "strlen",
        "printf",
        "snprintf",
        "vsnprintf",
        "sprintf",
        "frexp",
        "ldexp",
        "modf",
        "pow",
        "log10",
        "floor",
    ];
    for word in code.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')) {
        assert!(
            !libc_names.contains(&word),
            "printf.h calls the libc name `{word}`"
        );
    }
    // Only abi.h before it and a bare GPUIO_FN: no libc header anywhere.
    let dir = tempfile::tempdir().unwrap();
    let tu = dir.path().join("bare.cpp");
    std::fs::write(
        &tu,
        "#include \"gpuio/abi.h\"\n#define GPUIO_FN static inline\n#define GPUIO_NOINLINE static __attribute__((noinline))\n#include \"gpuio/printf.h\"\n\
         int use_it(char *o, const void *p, float f) {\n\
         \x20 return gpuio_snprintf(o, 64, \"%d %s %f %p %c\", 1, \"x\", f, p, 'c') + gpuio_snprintf(o, 1, \"x\");\n}\n",
    )
    .unwrap();
    let cxx = std::env::var("CXX").unwrap_or_else(|_| "c++".to_string());
    let mut words = cxx.split_whitespace();
    let status = std::process::Command::new(words.next().unwrap())
        .args(words)
        .args([
            "-std=c++17",
            "-nostdinc",
            "-fsyntax-only",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-I",
        ])
        .arg(&include)
        .arg(&tu)
        .status()
        .expect("run the C++ compiler");
    assert!(
        status.success(),
        "printf.h does not compile without include paths"
    );
}
