/* loom_hls.h: loom's own small implementation of the Vitis HLS C-simulation types for plain g++.
 *
 * ap_int<W> / ap_uint<W> (1..64 bits), ap_fixed<W, I, Q, O> / ap_ufixed<W, I, Q, O> (W <= 64) and
 * hls::stream<T>, so that loom's generated HLS C++ and its C-simulation testbench compile and run
 * without the vendor headers. Under Vitis HLS the vendor's ap_int.h, ap_fixed.h and hls_stream.h are
 * used instead (loom's shims of the same names only include this file).
 *
 * Semantics (as the vendor documents them; limits are loom's):
 *  - ap_int/ap_uint hold a W-bit two's complement value; every assignment wraps to W bits. Arithmetic
 *    goes through the implicit conversion to (unsigned) long long, so a + b, a * b are exact for
 *    operands up to 32 bits, as Vitis' full-precision results are, and wrap when stored back.
 *  - ap_fixed<W, I> holds raw / 2^(W - I) with a W-bit raw integer. +, -, * and unary - of two
 *    fixed-point values are exact (full-precision result types, at most 64 bits: wider ones are a
 *    compile error here, so loom's emitter refuses them first); quantisation (Q) and overflow (O) modes apply when a value is converted into
 *    a type: AP_TRN (floor), AP_TRN_ZERO, AP_RND (half up), AP_RND_ZERO, AP_RND_MIN_INF, AP_RND_INF,
 *    AP_RND_CONV (half to even); AP_WRAP, AP_SAT, AP_SAT_ZERO, AP_SAT_SYM (-max..max: the minimum
 *    of a signed type becomes -max too, as in the vendor's C simulation; AP_WRAP_SM is not implemented).
 *    a / b of two fixed-point values is exact: the quotient (a loom_hls::fixed_quotient) is quantised once, by
 *    the target type's modes, when it converts into a type (integer arithmetic, 128-bit intermediates; x / 0 is
 *    the largest value of x's sign, 0 / 0 is 0). Mixed operations with C scalars go through double, then
 *    quantise on assignment. NaN converts to 0; +-inf is the largest value of its sign in every overflow mode.
 *  - hls::stream<T, DEPTH> is a FIFO: read() of an empty stream reports and aborts (in hardware
 *    the design would stall for ever); DEPTH 0 (the default) is unbounded, as in Vitis C simulation;
 *    with DEPTH > 0 full() is true at DEPTH elements and write() to a full stream reports and aborts.
 */
#ifndef LOOM_HLS_H
#define LOOM_HLS_H

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <type_traits>

enum ap_q_mode { AP_RND, AP_RND_ZERO, AP_RND_MIN_INF, AP_RND_INF, AP_RND_CONV, AP_TRN, AP_TRN_ZERO };
enum ap_o_mode { AP_SAT, AP_SAT_ZERO, AP_SAT_SYM, AP_WRAP, AP_WRAP_SM };

namespace loom_hls {
__extension__ typedef __int128 i128;  // exact intermediate of fixed-point conversions and products

/* The W-bit two's complement value of raw (sign-extended when S). */
template <int W, bool S>
inline i128 wrap_bits(i128 raw) {
  const unsigned __int128 mask = (((unsigned __int128)1) << W) - 1;
  unsigned __int128 u = (unsigned __int128)raw & mask;
  if (S && ((u >> (W - 1)) & 1)) return (i128)u - (((i128)1) << W);
  return (i128)u;
}

template <int W, bool S>
inline i128 min_raw() { return S ? -(((i128)1) << (W - 1)) : 0; }
template <int W, bool S>
inline i128 max_raw() { return S ? (((i128)1) << (W - 1)) - 1 : (((i128)1) << W) - 1; }

/* num * 2^k (k >= 0) exactly while it fits in 126 bits; beyond, a value of num's sign, at least 2^100 in
   magnitude and congruent to num * 2^k modulo 2^64: every overflow mode still sees the overflow, and AP_WRAP
   keeps the true low bits (formats with extreme integer bits, ap_fixed<16, -60>(5), huge doubles). */
inline i128 shift_up(i128 num, int k) {
  if (num == 0) return 0;
  unsigned __int128 mag = num < 0 ? -(unsigned __int128)num : (unsigned __int128)num;
  if (k < 126 && (mag >> (126 - k)) == 0) return num * (((i128)1) << k);
  unsigned __int128 low = k >= 64 ? 0 : ((mag << k) & ((((unsigned __int128)1) << 64) - 1));
  i128 r = (((i128)1) << 100) + (i128)low;
  return num < 0 ? -r : r;
}

/* A value floor_q + frac (0 < frac < 1; half: frac's order against 1/2, -1, 0 or 1) rounded by mode q. */
inline i128 round_floor(i128 floor_q, int half, bool negative, ap_q_mode q) {
  switch (q) {
    case AP_TRN: return floor_q;
    case AP_TRN_ZERO: return negative ? floor_q + 1 : floor_q;
    case AP_RND: return half >= 0 ? floor_q + 1 : floor_q;
    case AP_RND_MIN_INF: return half > 0 ? floor_q + 1 : floor_q;
    case AP_RND_ZERO: return half > 0 || (half == 0 && negative) ? floor_q + 1 : floor_q;
    case AP_RND_INF: return half > 0 || (half == 0 && !negative) ? floor_q + 1 : floor_q;
    case AP_RND_CONV: return half > 0 || (half == 0 && (floor_q & 1)) ? floor_q + 1 : floor_q;
  }
  return floor_q;
}

/* floor(num / 2^shift) rounded by mode q (shift > 0); exact integer arithmetic. */
inline i128 quantise_shift(i128 num, int shift, ap_q_mode q) {
  const i128 one = 1;
  if (shift > 120) shift = 120;  // |num| < 2^119: every shift from 66 on has the same floor and rounding
  i128 floor_q = num >> shift;  // arithmetic shift: floor
  i128 rem = num - floor_q * (one << shift);  // 0 <= rem < 2^shift (no left shift of a negative value: UB)
  if (rem == 0) return floor_q;
  i128 half = one << (shift - 1);
  return round_floor(floor_q, (rem > half) - (rem < half), num < 0, q);
}

typedef unsigned __int128 u128;

/* |a| * 2^k / |b| (|a|, |b| < 2^64, b != 0) as an exact quotient and remainder 0 <= rem < den, den = |b| * 2^-k
   for k < 0, else |b|. A quotient from 2^100 on is kept as 2^100 plus its true low 64 bits (shift_up's stand-in:
   every overflow mode still sees the overflow, AP_WRAP the low bits). */
struct magnitude_quotient {
  u128 quot, rem, den;
};
inline magnitude_quotient divide_magnitudes(u128 a, u128 b, int k) {
  const u128 low64 = (((u128)1) << 64) - 1, big = ((u128)1) << 100;
  if (k < 0) {
    if (k < -64) return {0, a, 0};  // den >= 2^65 > 2a: the quotient is 0 and the remainder below half (den 0 says so)
    u128 den = b << -k;  // < 2^128
    return {a / den, a % den, den};
  }
  u128 quot = a / b, rem = a % b;
  bool huge = false;
  while (k > 0) {  // long division, up to 63 bits a step: rem < b < 2^64, so rem << step < 2^127
    int step = k < 63 ? k : 63;
    u128 wide = rem << step;
    huge = huge || (quot >> (100 - step)) != 0;
    quot = ((huge ? quot & low64 : quot) << step) + wide / b;
    rem = wide % b;
    k -= step;
  }
  if (huge || quot >= big) quot = big + (quot & low64);
  return {quot, rem, b};
}

/* (a * 2^-fa) / (b * 2^-fb) * 2^frac rounded by q, as an exact integer (b != 0): the raw value of the exact
   quotient in a type of frac fraction bits, before overflow. */
inline i128 quantise_ratio(i128 a, int fa, i128 b, int fb, int frac, ap_q_mode q) {
  bool negative = (a < 0) != (b < 0) && a != 0;
  u128 ma = a < 0 ? -(u128)a : (u128)a, mb = b < 0 ? -(u128)b : (u128)b;
  magnitude_quotient d = divide_magnitudes(ma, mb, frac + fb - fa);
  i128 quot = (i128)d.quot;
  if (d.rem == 0) return negative ? -quot : quot;
  // the fraction rem / den against 1/2, without 2 * rem (den may be near 2^128); den 0 stands for one >= 2^65
  int half = d.den == 0 ? -1 : (d.rem > d.den - d.rem) - (d.rem < d.den - d.rem);
  if (!negative) return round_floor(quot, half, false, q);
  return round_floor(-quot - 1, -half, true, q);  // -(quot + f) = (-quot - 1) + (1 - f)
}

/* An exact value raw into W bits by overflow mode o. */
template <int W, bool S>
inline i128 overflow(i128 raw, ap_o_mode o) {
  static_assert(W >= 1 && W <= 64, "loom_hls.h: widths are 1..64 bits");
  const i128 lo = min_raw<W, S>(), hi = max_raw<W, S>();
  if (o == AP_SAT_SYM && S && raw == lo) return -hi;  // as Vitis: the minimum itself saturates to -max
  if (raw >= lo && raw <= hi) return raw;
  switch (o) {
    case AP_SAT: return raw < lo ? lo : hi;
    case AP_SAT_ZERO: return 0;
    case AP_SAT_SYM: return raw < lo ? (S ? -hi : lo) : hi;
    case AP_WRAP: return wrap_bits<W, S>(raw);
    case AP_WRAP_SM: break;
  }
  std::fprintf(stderr, "loom_hls.h: overflow mode AP_WRAP_SM is not implemented\n");
  std::abort();
}

/* A double scaled by 2^frac, rounded by q, as an exact integer (beyond 2^100 in magnitude: shift_up's
   stand-in with the true low 64 bits; infinities as +-2^100). */
inline i128 quantise_double(double x, int frac, ap_q_mode q) {
  if (std::isnan(x)) return 0;
  double y = std::ldexp(x, frac);
  const double limit = 0x1p100;
  if (std::isinf(y)) return y > 0 ? ((i128)1) << 100 : -(((i128)1) << 100);
  if (!(y < limit && y > -limit)) {  // an integer: its 53-bit mantissa times 2^e, e >= 47
    int e;
    double m = std::frexp(y, &e);
    return shift_up((i128)std::ldexp(m, 53), e - 53);
  }
  double fl = std::floor(y);
  i128 base = (i128)fl;
  double rem = y - fl;  // exact: y and fl are within one binade's ulp
  if (rem == 0.0) return base;
  return round_floor(base, rem > 0.5 ? 1 : rem == 0.5 ? 0 : -1, y < 0, q);
}

/* a / b of two fixed-point values (num * 2^-num_frac over den * 2^-den_frac), kept exact until it converts into a
   type, where it is quantised once (quantise_ratio); in a double expression it is a / b of the two doubles. */
struct fixed_quotient {
  i128 num;
  int num_frac;
  i128 den;
  int den_frac;
  double to_double() const { return std::ldexp((double)num, -num_frac) / std::ldexp((double)den, -den_frac); }
  operator double() const { return to_double(); }
};

constexpr int max_int(int a, int b) { return a > b ? a : b; }
}  // namespace loom_hls

/* ---- arbitrary-width integers ------------------------------------------------------------- */

template <int W, bool S>
struct ap_int_base {
  static_assert(W >= 1 && W <= 64, "loom_hls.h: ap_int widths are 1..64 bits");
  typedef typename std::conditional<S, long long, unsigned long long>::type value_type;
  value_type v;

  static value_type make(loom_hls::i128 raw) { return (value_type)loom_hls::wrap_bits<W, S>(raw); }

  ap_int_base() : v(0) {}
  template <typename T, typename std::enable_if<std::is_integral<T>::value, int>::type = 0>
  ap_int_base(T x) : v(make((loom_hls::i128)x)) {}
  template <typename T, typename std::enable_if<std::is_floating_point<T>::value, int>::type = 0>
  ap_int_base(T x) : v(make(loom_hls::quantise_double((double)x, 0, AP_TRN_ZERO))) {}  // C's truncation
  template <int W2, bool S2>
  ap_int_base(const ap_int_base<W2, S2> &o) : v(make((loom_hls::i128)o.v)) {}
  /* a fixed-point quotient truncated toward zero, as C converts (x / 0 is 0, as +-inf and NaN convert) */
  ap_int_base(const loom_hls::fixed_quotient &x)
      : v(x.den == 0 ? 0 : make(loom_hls::quantise_ratio(x.num, x.num_frac, x.den, x.den_frac, 0, AP_TRN_ZERO))) {}

  operator value_type() const { return v; }
  int length() const { return W; }
  int to_int() const { return (int)v; }
  unsigned to_uint() const { return (unsigned)v; }
  long long to_int64() const { return (long long)v; }
  unsigned long long to_uint64() const { return (unsigned long long)v; }
  double to_double() const { return (double)v; }
  bool operator[](int bit) const { return ((unsigned long long)v >> bit) & 1; }
  void set_bit(int bit, bool value) {
    unsigned long long u = (unsigned long long)v;
    u = value ? (u | (1ULL << bit)) : (u & ~(1ULL << bit));
    v = make((loom_hls::i128)(S ? (loom_hls::i128)(long long)u : (loom_hls::i128)u));
  }
  /* bits hi..lo as an unsigned value */
  unsigned long long range(int hi, int lo) const {
    unsigned long long u = (unsigned long long)v >> lo;
    int n = hi - lo + 1;
    return n >= 64 ? u : (u & ((1ULL << n) - 1));
  }

#define LOOM_HLS_INT_ASSIGN(op)                          \
  template <typename T>                                   \
  ap_int_base &operator op##=(const T &x) {               \
    v = make((loom_hls::i128)(v op x));                   \
    return *this;                                         \
  }
  LOOM_HLS_INT_ASSIGN(+) LOOM_HLS_INT_ASSIGN(-) LOOM_HLS_INT_ASSIGN(*) LOOM_HLS_INT_ASSIGN(/)
  LOOM_HLS_INT_ASSIGN(%) LOOM_HLS_INT_ASSIGN(&) LOOM_HLS_INT_ASSIGN(|) LOOM_HLS_INT_ASSIGN(^)
  LOOM_HLS_INT_ASSIGN(<<) LOOM_HLS_INT_ASSIGN(>>)
#undef LOOM_HLS_INT_ASSIGN
  ap_int_base &operator++() { v = make((loom_hls::i128)v + 1); return *this; }
  ap_int_base &operator--() { v = make((loom_hls::i128)v - 1); return *this; }
  ap_int_base operator++(int) { ap_int_base old = *this; ++*this; return old; }
  ap_int_base operator--(int) { ap_int_base old = *this; --*this; return old; }
};

template <int W>
struct ap_int : ap_int_base<W, true> {
  using ap_int_base<W, true>::ap_int_base;
  ap_int() : ap_int_base<W, true>() {}
};

template <int W>
struct ap_uint : ap_int_base<W, false> {
  using ap_int_base<W, false>::ap_int_base;
  ap_uint() : ap_int_base<W, false>() {}
};

/* ---- fixed point ------------------------------------------------------------------------------ */

template <int W, int I, bool S, ap_q_mode Q, ap_o_mode O>
struct ap_fixed_base {
  static_assert(W >= 1 && W <= 64, "loom_hls.h: ap_fixed widths are 1..64 bits");
  static constexpr int width = W, iwidth = I, frac = W - I;
  static constexpr bool is_signed = S;
  long long raw;  // value = exact() * 2^-frac: the W-bit pattern (a 64-bit unsigned one reads as unsigned)

  /* The raw value as a number: a 64-bit ap_ufixed's pattern above 2^63 is not negative. */
  loom_hls::i128 exact() const { return S ? (loom_hls::i128)raw : (loom_hls::i128)(unsigned long long)raw; }

  /* The value num * 2^-num_frac (exact), quantised and overflowed into this type. */
  static long long from_exact(loom_hls::i128 num, int num_frac) {
    loom_hls::i128 r;
    if (num_frac > frac) r = loom_hls::quantise_shift(num, num_frac - frac, Q);
    else r = loom_hls::shift_up(num, frac - num_frac);
    return (long long)loom_hls::overflow<W, S>(r, O);
  }
  static ap_fixed_base from_raw(long long r) { ap_fixed_base x; x.raw = r; return x; }
  /* +-infinity is the largest value of its sign in every overflow mode (as loom's base2 formats): wrapped, it
     would be 0, and a max-reduction that starts at -INFINITY would start at 0 */
  static long long from_double(double x) {
    if (std::isinf(x)) return (long long)loom_hls::overflow<W, S>(x > 0 ? loom_hls::max_raw<W, S>() : loom_hls::min_raw<W, S>(), O);
    return (long long)loom_hls::overflow<W, S>(loom_hls::quantise_double(x, frac, Q), O);
  }

  /* The exact quotient quantised once into this type; x / 0 converts as the double quotient did: +-inf is the
     largest value of its sign, 0 / 0 (NaN) is 0. */
  static long long from_quotient(const loom_hls::fixed_quotient &x) {
    if (x.den == 0) return x.num == 0 ? 0 : from_double(x.num > 0 ? HUGE_VAL : -HUGE_VAL);
    return (long long)loom_hls::overflow<W, S>(loom_hls::quantise_ratio(x.num, x.num_frac, x.den, x.den_frac, frac, Q), O);
  }

  ap_fixed_base() : raw(0) {}
  ap_fixed_base(const loom_hls::fixed_quotient &x) : raw(from_quotient(x)) {}
  template <typename T, typename std::enable_if<std::is_integral<T>::value, int>::type = 0>
  ap_fixed_base(T x) : raw(from_exact((loom_hls::i128)x, 0)) {}
  template <typename T, typename std::enable_if<std::is_floating_point<T>::value, int>::type = 0>
  ap_fixed_base(T x) : raw(from_double((double)x)) {}
  template <int W2, bool S2>
  ap_fixed_base(const ap_int_base<W2, S2> &o) : raw(from_exact((loom_hls::i128)o.v, 0)) {}
  template <int W2, int I2, bool S2, ap_q_mode Q2, ap_o_mode O2>
  ap_fixed_base(const ap_fixed_base<W2, I2, S2, Q2, O2> &o) : raw(from_exact(o.exact(), W2 - I2)) {}

  double to_double() const { return std::ldexp((double)exact(), -frac); }
  float to_float() const { return (float)to_double(); }
  /* bits hi..lo of the raw W-bit pattern (Vitis: an ap_range_ref; both have to_uint64()) */
  ap_int_base<64, false> range(int hi, int lo) const {
    unsigned long long u = (unsigned long long)raw >> lo;
    int n = hi - lo + 1;
    return ap_int_base<64, false>(n >= 64 ? u : (u & ((1ULL << n) - 1)));
  }
  /* the integer part (toward zero, as C converts), wrapped to 32 or 64 bits: exact where a double is not */
  loom_hls::i128 integer_part() const {
    return frac > 0 ? loom_hls::quantise_shift(exact(), frac, AP_TRN_ZERO) : loom_hls::shift_up(exact(), -frac);
  }
  int to_int() const { return (int)loom_hls::wrap_bits<32, true>(integer_part()); }
  long long to_int64() const { return (long long)loom_hls::wrap_bits<64, true>(integer_part()); }
  unsigned long long to_uint64() const { return (unsigned long long)loom_hls::wrap_bits<64, false>(integer_part()); }
  operator double() const { return to_double(); }
  int length() const { return W; }

  template <typename T>
  ap_fixed_base &operator+=(const T &x) { *this = ap_fixed_base(*this + x); return *this; }
  template <typename T>
  ap_fixed_base &operator-=(const T &x) { *this = ap_fixed_base(*this - x); return *this; }
  template <typename T>
  ap_fixed_base &operator*=(const T &x) { *this = ap_fixed_base(*this * x); return *this; }
  template <typename T>
  ap_fixed_base &operator/=(const T &x) { *this = ap_fixed_base(*this / x); return *this; }
};

template <int W, int I, ap_q_mode Q = AP_TRN, ap_o_mode O = AP_WRAP, int N = 0>
struct ap_fixed : ap_fixed_base<W, I, true, Q, O> {
  using ap_fixed_base<W, I, true, Q, O>::ap_fixed_base;
  ap_fixed() : ap_fixed_base<W, I, true, Q, O>() {}
};

template <int W, int I, ap_q_mode Q = AP_TRN, ap_o_mode O = AP_WRAP, int N = 0>
struct ap_ufixed : ap_fixed_base<W, I, false, Q, O> {
  using ap_fixed_base<W, I, false, Q, O>::ap_fixed_base;
  ap_ufixed() : ap_fixed_base<W, I, false, Q, O>() {}
};

namespace loom_hls {
/* The full-precision result type of a + b / a * b (what Vitis' ap_fixed returns). */
template <int W1, int I1, bool S1, int W2, int I2, bool S2>
struct fixed_sum {
  static constexpr bool S = S1 || S2;
  static constexpr int F = max_int(W1 - I1, W2 - I2);
  static constexpr int I = max_int(I1 + (S && !S1), I2 + (S && !S2)) + 1;
  typedef ap_fixed_base<I + F, I, S, AP_TRN, AP_WRAP> type;
};
template <int W1, int I1, bool S1, int W2, int I2, bool S2>
struct fixed_product {
  typedef ap_fixed_base<W1 + W2, I1 + I2, S1 || S2, AP_TRN, AP_WRAP> type;
};
/* raw * 2^k for comparing two raws (|raw| < 2^64) aligned to the finer format. From k = 64 on, the finer value
   is smaller than one step of this one, so only this raw's sign counts: sign * 2^64 keeps the order in 128 bits. */
inline i128 compare_scaled(i128 raw, int k) {
  if (k < 64) return raw * (((i128)1) << k);
  return (i128)((raw > 0) - (raw < 0)) * (((i128)1) << 64);
}
template <typename R, typename A, typename B>
inline i128 aligned(const A &a, const B &) { return shift_up(a.exact(), R::frac - A::frac); }
}  // namespace loom_hls

#define LOOM_HLS_FIXED_ARGS int W1, int I1, bool S1, ap_q_mode Q1, ap_o_mode O1, int W2, int I2, bool S2, ap_q_mode Q2, ap_o_mode O2
#define LOOM_HLS_FIXED_A const ap_fixed_base<W1, I1, S1, Q1, O1> &a
#define LOOM_HLS_FIXED_B const ap_fixed_base<W2, I2, S2, Q2, O2> &b

template <LOOM_HLS_FIXED_ARGS>
inline typename loom_hls::fixed_sum<W1, I1, S1, W2, I2, S2>::type operator+(LOOM_HLS_FIXED_A, LOOM_HLS_FIXED_B) {
  typedef typename loom_hls::fixed_sum<W1, I1, S1, W2, I2, S2>::type R;
  return R::from_raw((long long)(loom_hls::aligned<R>(a, b) + loom_hls::aligned<R>(b, a)));
}
template <LOOM_HLS_FIXED_ARGS>
inline typename loom_hls::fixed_sum<W1, I1, true, W2, I2, true>::type operator-(LOOM_HLS_FIXED_A, LOOM_HLS_FIXED_B) {
  typedef typename loom_hls::fixed_sum<W1, I1, true, W2, I2, true>::type R;  // a difference may be negative
  return R::from_raw((long long)(loom_hls::aligned<R>(a, b) - loom_hls::aligned<R>(b, a)));
}
template <LOOM_HLS_FIXED_ARGS>
inline typename loom_hls::fixed_product<W1, I1, S1, W2, I2, S2>::type operator*(LOOM_HLS_FIXED_A, LOOM_HLS_FIXED_B) {
  typedef typename loom_hls::fixed_product<W1, I1, S1, W2, I2, S2>::type R;
  return R::from_raw((long long)(a.exact() * b.exact()));
}
template <LOOM_HLS_FIXED_ARGS>
inline loom_hls::fixed_quotient operator/(LOOM_HLS_FIXED_A, LOOM_HLS_FIXED_B) {
  return loom_hls::fixed_quotient{a.exact(), W1 - I1, b.exact(), W2 - I2};
}
template <int W, int I, bool S, ap_q_mode Q, ap_o_mode O>
inline ap_fixed_base<W + 1, I + 1, true, AP_TRN, AP_WRAP> operator-(const ap_fixed_base<W, I, S, Q, O> &a) {
  return ap_fixed_base<W + 1, I + 1, true, AP_TRN, AP_WRAP>::from_raw((long long)-a.exact());
}

#define LOOM_HLS_FIXED_COMPARE(op)                                                              \
  template <LOOM_HLS_FIXED_ARGS>                                                                \
  inline bool operator op(LOOM_HLS_FIXED_A, LOOM_HLS_FIXED_B) {                                 \
    constexpr int F = loom_hls::max_int(W1 - I1, W2 - I2);                                      \
    return loom_hls::compare_scaled(a.exact(), F - (W1 - I1)) op loom_hls::compare_scaled(b.exact(), F - (W2 - I2)); \
  }
LOOM_HLS_FIXED_COMPARE(==) LOOM_HLS_FIXED_COMPARE(!=) LOOM_HLS_FIXED_COMPARE(<)
LOOM_HLS_FIXED_COMPARE(<=) LOOM_HLS_FIXED_COMPARE(>) LOOM_HLS_FIXED_COMPARE(>=)
#undef LOOM_HLS_FIXED_COMPARE

/* Fixed-point values are never NaN (loom's C helpers ask). */
template <int W, int I, bool S, ap_q_mode Q, ap_o_mode O>
inline bool isnan(const ap_fixed_base<W, I, S, Q, O> &) { return false; }

/* ---- streams ----------------------------------------------------------------------------------- */

namespace hls {
template <typename T, int DEPTH = 0>
class stream {
 public:
  stream() : name_("stream") {}
  explicit stream(const char *name) : name_(name) {}
  stream(const stream &) = delete;
  stream &operator=(const stream &) = delete;

  bool empty() const { return items_.empty(); }
  bool full() const { return DEPTH > 0 && items_.size() >= (size_t)DEPTH; }
  size_t size() const { return items_.size(); }

  T read() {
    if (items_.empty()) {
      std::fprintf(stderr, "hls::stream '%s': read from an empty stream (the design would stall for ever)\n", name_);
      std::abort();
    }
    T value = items_.front();
    items_.pop_front();
    return value;
  }
  void read(T &value) { value = read(); }
  bool read_nb(T &value) {
    if (items_.empty()) return false;
    value = read();
    return true;
  }
  void write(const T &value) {
    if (full()) {
      std::fprintf(stderr, "hls::stream '%s': write to a full stream of depth %d\n", name_, DEPTH);
      std::abort();
    }
    items_.push_back(value);
  }
  bool write_nb(const T &value) {
    if (full()) return false;
    items_.push_back(value);
    return true;
  }
  stream &operator>>(T &value) { read(value); return *this; }
  stream &operator<<(const T &value) { write(value); return *this; }

 private:
  const char *name_;
  std::deque<T> items_;
};
}  // namespace hls

#endif  /* LOOM_HLS_H */
