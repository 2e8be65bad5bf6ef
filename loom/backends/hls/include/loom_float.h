/* loom_float.h: loom's custom floating-point formats (base2 floats) as an HLS C++ type.
 *
 * loom_float<E, M, BIAS, SPECIAL, RND, OVF> holds a W = 1 + E + M bit pattern (ap_uint<W>): a sign, E exponent
 * bits, M stored mantissa bits, subnormals, exponent bias BIAS. SPECIAL says what the top patterns mean, as in
 * loom.core.numformats.FloatFormat: LOOM_IEEE (all-ones exponent: inf / NaN), LOOM_FN (no inf, S.1..1.1..1 is
 * NaN: float8_e4m3fn) or LOOM_FNUZ (no inf, no -0, the pattern 1.0..0 is the one NaN). RND is the rounding of
 * every result -- LOOM_RND_TRUNCATE (toward zero), LOOM_RND_NEAREST_EVEN, LOOM_RND_NEAREST_AWAY -- and OVF what a
 * finite result beyond the largest finite value becomes -- LOOM_OVF_INF (infinity, or NaN in a format without
 * one) or LOOM_OVF_SATURATE (the largest finite value). Exact infinities (an infinite operand, x / 0) stay
 * infinite (NaN without inf) whatever OVF.
 *
 * a + b, a - b, a * b, a / b and loom_fma(a, b, c) of two (three) values of one type are rounded once from the
 * exact result, with integer arithmetic only (64-bit intermediates, no float unit): the value is decoded to a
 * significand and an exponent, the exact sum / product is formed (sums align into a 64-bit window whose bits
 * shifted out are a sticky bit; quotients keep >= 38 quotient bits and the remainder as the sticky bit), then
 * rounded by RND and OVF. A NaN operand or an invalid operation (inf - inf, 0 * inf, 0 / 0, inf / inf) gives the
 * positive quiet NaN; an exact zero has IEEE's sign (x - x = +0, -0 + -0 = -0); a NaN converted into the format is
 * its quiet NaN with the NaN's sign. Conversions from float / double / integers round exactly once (RND, OVF);
 * the conversion to float / double is exact (E <= 8, M <= 23, as loom's formats: double holds every value).
 * These are loom's base2 rules (docs/formats.md); the C simulation equals loom.core.numformats bit for bit.
 */
#ifndef LOOM_FLOAT_H
#define LOOM_FLOAT_H

#include <ap_int.h>
#include <math.h>
#include <stdint.h>

enum loom_float_special { LOOM_IEEE, LOOM_FN, LOOM_FNUZ };
enum loom_float_rounding { LOOM_RND_TRUNCATE, LOOM_RND_NEAREST_EVEN, LOOM_RND_NEAREST_AWAY };
enum loom_float_overflow { LOOM_OVF_INF, LOOM_OVF_SATURATE };

namespace loom_float_impl {

/* Position of the highest set bit of x > 0 (a priority encoder in hardware). */
inline int msb64(uint64_t x) {
#if !defined(__SYNTHESIS__) && defined(__GNUC__)
  return x ? 63 - __builtin_clzll(x) : 0;  /* the C simulation's shortcut of the same function */
#endif
  int n = 0;
  for (int k = 32; k > 0; k >>= 1) {
    if (x >> k) {
      x >>= k;
      n += k;
    }
  }
  return n;
}

/* A decoded value: sig * 2^exp (sig == 0: a zero), or inf / NaN. */
struct unpacked {
  bool neg;
  bool inf;
  bool nan;
  uint64_t sig;
  int exp;
};

}  // namespace loom_float_impl

template <int E, int M, int BIAS, int SPECIAL = LOOM_IEEE, int RND = LOOM_RND_NEAREST_EVEN, int OVF = LOOM_OVF_INF>
struct loom_float {
  static_assert(E >= 1 && E <= 8, "loom_float: 1 <= E <= 8");
  static_assert(M >= 1 && M <= 23, "loom_float: 1 <= M <= 23");
  static_assert(BIAS >= 0 && BIAS < (1 << E), "loom_float: 0 <= BIAS < 2^E");
  static_assert(SPECIAL != LOOM_IEEE || E >= 2, "loom_float: an ieee format needs 2 exponent bits");
  static const int W = 1 + E + M;
  static const uint32_t SIGN = (uint32_t)1 << (E + M);
  static const uint32_t EXP_ONES = ((uint32_t)1 << E) - 1;
  static const uint32_t MAX_MAG = SPECIAL == LOOM_IEEE ? (EXP_ONES << M) - 1
                                  : SPECIAL == LOOM_FN ? SIGN - 2 : SIGN - 1;
  typedef loom_float_impl::unpacked unpacked;

  ap_uint<W> bits;

  /* ---- patterns */
  static uint32_t nan_bits(bool neg) {
    if (SPECIAL == LOOM_FNUZ) return SIGN;
    uint32_t sign = neg ? SIGN : 0;
    if (SPECIAL == LOOM_FN) return sign | (SIGN - 1);
    return sign | (EXP_ONES << M) | ((uint32_t)1 << (M - 1));
  }
  static uint32_t inf_bits(bool neg) {  /* +-inf, or the NaN of a format without infinities */
    if (SPECIAL != LOOM_IEEE) return nan_bits(neg);
    return (neg ? SIGN : 0) | (EXP_ONES << M);
  }
  static uint32_t zero_bits(bool neg) { return (neg && SPECIAL != LOOM_FNUZ) ? SIGN : 0; }
  static loom_float from_bits(uint32_t b) {
    loom_float r;
    r.bits = b;
    return r;
  }
  uint32_t to_bits() const { return (uint32_t)bits.to_uint64(); }

  /* ---- decoding */
  static bool pattern_is_nan(uint32_t b) {
    if (SPECIAL == LOOM_FNUZ) return b == SIGN;
    uint32_t mag = b & (SIGN - 1);
    if (SPECIAL == LOOM_FN) return mag == SIGN - 1;
    return mag > (EXP_ONES << M);
  }
  static unpacked unpack(uint32_t b) {
    unpacked u;
    u.neg = (b & SIGN) != 0;
    u.nan = pattern_is_nan(b);
    uint32_t e = (b >> M) & EXP_ONES;
    uint32_t m = b & (((uint32_t)1 << M) - 1);
    u.inf = !u.nan && SPECIAL == LOOM_IEEE && e == EXP_ONES;
    u.sig = e == 0 ? (uint64_t)m : (uint64_t)(m | ((uint32_t)1 << M));
    u.exp = (e == 0 ? 1 : (int)e) - BIAS - M;
    return u;
  }

  /* ---- rounding: the pattern of (sig + s) * 2^exp, 0 <= s < 1 and s > 0 exactly when sticky (and then the
     rounding drops at least one bit of sig: callers keep enough low bits) */
  static uint32_t round_pack(bool neg, uint64_t sig, int exp, bool sticky) {
    if (sig == 0 && !sticky) return zero_bits(neg);
    int lead = loom_float_impl::msb64(sig);
    int biased = lead + exp + BIAS;
    int lowest = biased > 1 ? biased : 1;
    int quantum = lowest - BIAS - M;
    int shift = quantum - exp;
    uint64_t q;
    int half;     /* the dropped part against half a quantum: -1 below, 0 a tie, 1 above */
    bool inexact;
    if (shift <= 0) {
      q = sig << (-shift);
      half = -1;
      inexact = false;
    } else if (shift >= 64) {
      q = 0;
      if (shift > 64) {
        half = -1;
      } else {
        const uint64_t h = (uint64_t)1 << 63;
        half = sig > h ? 1 : sig < h ? -1 : (sticky ? 1 : 0);
      }
      inexact = true;
    } else {
      q = sig >> shift;
      uint64_t rem = sig & ((((uint64_t)1) << shift) - 1);
      uint64_t h = ((uint64_t)1) << (shift - 1);
      half = rem > h ? 1 : rem < h ? -1 : (sticky ? 1 : 0);
      inexact = rem != 0 || sticky;
    }
    if (inexact) {
      bool up = false;
      if (RND == LOOM_RND_NEAREST_EVEN) up = half > 0 || (half == 0 && (q & 1));
      else if (RND == LOOM_RND_NEAREST_AWAY) up = half >= 0;
      q += up ? 1 : 0;
    }
    uint64_t mag = ((uint64_t)(lowest - 1) << M) + q;
    if (mag > MAX_MAG) {
      if (OVF == LOOM_OVF_SATURATE) mag = MAX_MAG;
      else return inf_bits(neg);
    }
    if (mag == 0) return zero_bits(neg);
    return (neg ? SIGN : 0) | (uint32_t)mag;
  }

  /* The exact sum of two nonzero finite values (sig < 2^62), rounded once. */
  static uint32_t add_exact(bool na, uint64_t sa, int ea, bool nb, uint64_t sb, int eb) {
    int la = 61 - loom_float_impl::msb64(sa), lb = 61 - loom_float_impl::msb64(sb);
    sa <<= la;  /* both in [2^61, 2^62): the larger exponent is the larger magnitude */
    ea -= la;
    sb <<= lb;
    eb -= lb;
    if (eb > ea || (eb == ea && sb > sa)) {
      bool tn = na; na = nb; nb = tn;
      uint64_t ts = sa; sa = sb; sb = ts;
      int te = ea; ea = eb; eb = te;
    }
    int d = ea - eb;
    uint64_t small;
    bool sticky;
    if (d >= 64) {
      small = 0;
      sticky = true;
    } else {
      small = sb >> d;
      sticky = d > 0 && (sb & ((((uint64_t)1) << d) - 1)) != 0;
    }
    if (na == nb) return round_pack(na, sa + small, ea, sticky);
    /* sa - (small + s) = (sa - small - 1) + (1 - s); bits are only shifted out when d > 14 (both
       significands have at most 48 bits), and then the difference keeps >= 60 bits */
    uint64_t diff = sa - small - (sticky ? 1 : 0);
    if (diff == 0 && !sticky) return 0;  /* x - x = +0 */
    return round_pack(na, diff, ea, sticky);
  }

  /* ---- conversions into the format (rounded once by RND, OVF) */
  static uint32_t from_double(double x) {
    uint64_t b;
    __builtin_memcpy(&b, &x, sizeof b);
    bool neg = (b >> 63) != 0;
    uint32_t e = (uint32_t)((b >> 52) & 0x7FF);
    uint64_t m = b & ((((uint64_t)1) << 52) - 1);
    if (e == 0x7FF) return m != 0 ? nan_bits(neg) : inf_bits(neg);
    if (e == 0) return round_pack(neg, m, -1074, false);
    return round_pack(neg, m | (((uint64_t)1) << 52), (int)e - 1075, false);
  }
  static uint32_t from_integer(bool neg, uint64_t mag) { return round_pack(neg, mag, 0, false); }

  loom_float() : bits(0) {}
  loom_float(double x) : bits(from_double(x)) {}
  loom_float(float x) : bits(from_double((double)x)) {}
  loom_float(int x) : bits(from_integer(x < 0, x < 0 ? 0 - (uint64_t)(int64_t)x : (uint64_t)x)) {}
  loom_float(long x) : bits(from_integer(x < 0, x < 0 ? 0 - (uint64_t)(int64_t)x : (uint64_t)x)) {}
  loom_float(long long x) : bits(from_integer(x < 0, x < 0 ? 0 - (uint64_t)(int64_t)x : (uint64_t)x)) {}
  loom_float(unsigned x) : bits(from_integer(false, x)) {}
  loom_float(unsigned long x) : bits(from_integer(false, x)) {}
  loom_float(unsigned long long x) : bits(from_integer(false, x)) {}
  loom_float(bool x) : bits(from_integer(false, x ? 1 : 0)) {}

  /* ---- exact conversions out */
  double to_double() const {
    unpacked u = unpack(to_bits());
    if (u.nan) return u.neg ? -(double)NAN : (double)NAN;
    if (u.inf) return u.neg ? -(double)INFINITY : (double)INFINITY;
    double mag = ldexp((double)u.sig, u.exp);
    return u.neg ? -mag : mag;
  }
  explicit operator double() const { return to_double(); }
  explicit operator float() const { return (float)to_double(); }

  /* ---- arithmetic, rounded once */
  static loom_float add(loom_float a, loom_float b, bool negate_b) {
    unpacked x = unpack(a.to_bits()), y = unpack(b.to_bits());
    if (x.nan || y.nan) return from_bits(nan_bits(false));
    y.neg = y.neg != negate_b;
    if (x.inf || y.inf) {
      if (x.inf && y.inf && x.neg != y.neg) return from_bits(nan_bits(false));
      return from_bits(inf_bits(x.inf ? x.neg : y.neg));
    }
    if (x.sig == 0 && y.sig == 0) return from_bits(zero_bits(x.neg && y.neg));
    if (x.sig == 0) return from_bits(round_pack(y.neg, y.sig, y.exp, false));
    if (y.sig == 0) return from_bits(round_pack(x.neg, x.sig, x.exp, false));
    return from_bits(add_exact(x.neg, x.sig, x.exp, y.neg, y.sig, y.exp));
  }
  friend loom_float operator+(loom_float a, loom_float b) { return add(a, b, false); }
  friend loom_float operator-(loom_float a, loom_float b) { return add(a, b, true); }
  friend loom_float operator*(loom_float a, loom_float b) {
    unpacked x = unpack(a.to_bits()), y = unpack(b.to_bits());
    if (x.nan || y.nan) return from_bits(nan_bits(false));
    bool neg = x.neg != y.neg;
    if (x.inf || y.inf) {
      if ((!x.inf && x.sig == 0) || (!y.inf && y.sig == 0)) return from_bits(nan_bits(false));
      return from_bits(inf_bits(neg));
    }
    return from_bits(round_pack(neg, x.sig * y.sig, x.exp + y.exp, false));
  }
  friend loom_float operator/(loom_float a, loom_float b) {
    unpacked x = unpack(a.to_bits()), y = unpack(b.to_bits());
    if (x.nan || y.nan) return from_bits(nan_bits(false));
    bool neg = x.neg != y.neg;
    if (x.inf) return from_bits(y.inf ? nan_bits(false) : inf_bits(neg));
    if (y.inf) return from_bits(zero_bits(neg));
    if (y.sig == 0) return from_bits(x.sig == 0 ? nan_bits(false) : inf_bits(neg));
    if (x.sig == 0) return from_bits(zero_bits(neg));
    int up = 62 - loom_float_impl::msb64(x.sig);  /* the dividend in [2^62, 2^63): >= 38 quotient bits */
    uint64_t num = x.sig << up;
    uint64_t q = num / y.sig, r = num % y.sig;
    return from_bits(round_pack(neg, q, x.exp - up - y.exp, r != 0));
  }
  /* a * b + c, rounded once */
  static loom_float fma(loom_float a, loom_float b, loom_float c) {
    unpacked x = unpack(a.to_bits()), y = unpack(b.to_bits()), z = unpack(c.to_bits());
    if (x.nan || y.nan || z.nan) return from_bits(nan_bits(false));
    bool pneg = x.neg != y.neg;
    bool pinf = x.inf || y.inf;
    if (pinf && ((!x.inf && x.sig == 0) || (!y.inf && y.sig == 0))) return from_bits(nan_bits(false));
    if (pinf || z.inf) {
      if (pinf && z.inf && pneg != z.neg) return from_bits(nan_bits(false));
      return from_bits(inf_bits(pinf ? pneg : z.neg));
    }
    uint64_t p = x.sig * y.sig;
    if (p == 0 && z.sig == 0) return from_bits(zero_bits(pneg && z.neg));
    if (p == 0) return from_bits(round_pack(z.neg, z.sig, z.exp, false));
    if (z.sig == 0) return from_bits(round_pack(pneg, p, x.exp + y.exp, false));
    return from_bits(add_exact(pneg, p, x.exp + y.exp, z.neg, z.sig, z.exp));
  }
};

/* Sign, comparisons, min and max of loom_float values, with integer operations only: what the IR's float
   operation on the values' exact float conversions gives, rounded back into the format (-NaN is the quiet NaN
   of the other sign, fnuz has no -0, a NaN operand of maximum/minimum gives the positive quiet NaN). */
template <int E, int M, int B, int S, int R, int O>
inline loom_float<E, M, B, S, R, O> loom_neg(loom_float<E, M, B, S, R, O> x) {
  typedef loom_float<E, M, B, S, R, O> T;
  uint32_t b = x.to_bits();
  bool neg = (b & T::SIGN) != 0;
  if (T::pattern_is_nan(b)) return T::from_bits(T::nan_bits(!neg));
  if ((b & (T::SIGN - 1)) == 0) return T::from_bits(T::zero_bits(!neg));
  return T::from_bits(b ^ T::SIGN);
}

template <int E, int M, int B, int S, int R, int O>
inline loom_float<E, M, B, S, R, O> loom_abs(loom_float<E, M, B, S, R, O> x) {
  typedef loom_float<E, M, B, S, R, O> T;
  uint32_t b = x.to_bits();
  if (T::pattern_is_nan(b)) return T::from_bits(T::nan_bits(false));
  return T::from_bits(b & (T::SIGN - 1));
}

namespace loom_float_impl {
/* The order of a non-NaN pattern as an integer (+0 and -0 are one value). */
template <class T>
inline int64_t order_key(uint32_t b) {
  int64_t mag = (int64_t)(b & (T::SIGN - 1));
  return (b & T::SIGN) ? -mag : mag;
}
}  // namespace loom_float_impl

/* arith.maximumf / minimumf: NaN-propagating, -0 < +0 */
template <int E, int M, int B, int S, int R, int O>
inline loom_float<E, M, B, S, R, O> loom_maximum(loom_float<E, M, B, S, R, O> a, loom_float<E, M, B, S, R, O> b) {
  typedef loom_float<E, M, B, S, R, O> T;
  uint32_t x = a.to_bits(), y = b.to_bits();
  if (T::pattern_is_nan(x) || T::pattern_is_nan(y)) return T::from_bits(T::nan_bits(false));
  int64_t kx = loom_float_impl::order_key<T>(x), ky = loom_float_impl::order_key<T>(y);
  if (kx == ky) return (x & T::SIGN) ? b : a;
  return kx > ky ? a : b;
}

template <int E, int M, int B, int S, int R, int O>
inline loom_float<E, M, B, S, R, O> loom_minimum(loom_float<E, M, B, S, R, O> a, loom_float<E, M, B, S, R, O> b) {
  typedef loom_float<E, M, B, S, R, O> T;
  uint32_t x = a.to_bits(), y = b.to_bits();
  if (T::pattern_is_nan(x) || T::pattern_is_nan(y)) return T::from_bits(T::nan_bits(false));
  int64_t kx = loom_float_impl::order_key<T>(x), ky = loom_float_impl::order_key<T>(y);
  if (kx == ky) return (x & T::SIGN) ? a : b;
  return kx < ky ? a : b;
}

/* arith.cmpf: predicate P is MLIR's number (0 false, 1 oeq, 2 ogt, 3 oge, 4 olt, 5 ole, 6 one, 7 ord, 8 ueq, 9 ugt,
   10 uge, 11 ult, 12 ule, 13 une, 14 uno, 15 true); a comparison with a NaN is unordered */
template <int P, int E, int M, int B, int S, int R, int O>
inline bool loom_cmp(loom_float<E, M, B, S, R, O> a, loom_float<E, M, B, S, R, O> b) {
  typedef loom_float<E, M, B, S, R, O> T;
  uint32_t x = a.to_bits(), y = b.to_bits();
  bool unordered = T::pattern_is_nan(x) || T::pattern_is_nan(y);
  int64_t kx = loom_float_impl::order_key<T>(x), ky = loom_float_impl::order_key<T>(y);
  bool lt = !unordered && kx < ky, gt = !unordered && kx > ky, eq = !unordered && kx == ky;
  switch (P) {
    case 0: return false;
    case 1: return eq;
    case 2: return gt;
    case 3: return gt || eq;
    case 4: return lt;
    case 5: return lt || eq;
    case 6: return lt || gt;
    case 7: return !unordered;
    case 8: return unordered || eq;
    case 9: return unordered || gt;
    case 10: return unordered || gt || eq;
    case 11: return unordered || lt;
    case 12: return unordered || lt || eq;
    case 13: return unordered || !eq;
    case 14: return unordered;
    default: return true;
  }
}

template <int E, int M, int B, int S, int R, int O>
inline loom_float<E, M, B, S, R, O> loom_fma(loom_float<E, M, B, S, R, O> a, loom_float<E, M, B, S, R, O> b,
                                             loom_float<E, M, B, S, R, O> c) {
  return loom_float<E, M, B, S, R, O>::fma(a, b, c);
}

#endif
