"""An independent model of loom's custom float formats for the HLS tests, written from docs/formats.md with
exact rational arithmetic (``fractions.Fraction``) -- not loom.core.numformats.

A result is ``("nan", sign)`` (sign None: not checked), ``("inf", negative)`` or ``(Fraction, negative)``
(the sign matters for zeros)."""

from __future__ import annotations

import math
from fractions import Fraction


class Fmt:
    def __init__(self, e: int, m: int, bias: int | None = None, special: str = "ieee"):
        self.e, self.m, self.special = e, m, special
        self.bias = bias if bias is not None else (1 << (e - 1)) - (0 if special == "fnuz" else 1)
        self.width = 1 + e + m
        top = (1 << e) - 1  # the all-ones exponent field
        if special == "ieee":
            self.max = (2 - Fraction(1, 1 << m)) * Fraction(2) ** (top - 1 - self.bias)
        elif special == "fn":
            self.max = (2 - Fraction(2, 1 << m)) * Fraction(2) ** (top - self.bias)
        else:
            self.max = (2 - Fraction(1, 1 << m)) * Fraction(2) ** (top - self.bias)
        self.emin = 1 - self.bias  # exponent of the smallest normal

    def value(self, pattern: int):
        """The meaning of a pattern: ("nan", sign), ("inf", neg) or (Fraction, neg)."""
        neg = bool(pattern >> (self.e + self.m) & 1)
        field = pattern >> self.m & ((1 << self.e) - 1)
        man = pattern & ((1 << self.m) - 1)
        top = (1 << self.e) - 1
        if self.special == "fnuz" and pattern == 1 << (self.e + self.m):
            return ("nan", None)
        if self.special == "fn" and field == top and man == (1 << self.m) - 1:
            return ("nan", neg)
        if self.special == "ieee" and field == top:
            return ("nan", neg) if man else ("inf", neg)
        if field == 0:
            mag = Fraction(man) * Fraction(2) ** (self.emin - self.m)
        else:
            mag = (1 + Fraction(man, 1 << self.m)) * Fraction(2) ** (field - self.bias)
        return (mag, neg)

    def infinite(self, neg: bool):
        return ("inf", neg) if self.special == "ieee" else ("nan", None if self.special == "fnuz" else neg)

    def zero(self, neg: bool):
        return (Fraction(0), neg and self.special != "fnuz")

    def round(self, x: Fraction, rounding: str, overflow: str, zero_negative: bool = False):
        """x rounded into the format: the exponent unbounded above, then the overflow rule."""
        if x == 0:
            return self.zero(zero_negative)
        neg, mag = x < 0, abs(x)
        e = math.floor(math.log2(mag.numerator)) - math.floor(math.log2(mag.denominator))
        while Fraction(2) ** e > mag:
            e -= 1
        while Fraction(2) ** (e + 1) <= mag:
            e += 1
        ulp = Fraction(2) ** (max(e, self.emin) - self.m)
        n = mag / ulp
        low = math.floor(n)
        rest = n - low
        if rounding == "truncate":
            up = False
        elif rest != Fraction(1, 2):
            up = rest > Fraction(1, 2)
        else:
            up = rounding == "nearest_away" or low % 2 == 1
        r = (low + up) * ulp
        if r > self.max:
            return (self.max, neg) if overflow == "saturate" else self.infinite(neg)
        if r == 0:
            return self.zero(neg)
        return (r, neg)

    def op(self, name: str, patterns: list[int], rounding: str, overflow: str):
        """add, sub, mul, div, fma of patterns, as docs/formats.md defines them."""
        xs = [self.value(p) for p in patterns]
        if any(x[0] == "nan" for x in xs):
            return ("nan", False)
        if name == "sub":
            xs[1] = (xs[1][0], not xs[1][1])
            name = "add"
        if name == "div":
            (a, na), (b, nb) = xs
            neg = na != nb
            if a == "inf":
                return ("nan", False) if b == "inf" else self.infinite(neg)
            if b == "inf":
                return self.zero(neg)
            if b == 0:
                return ("nan", False) if a == 0 else self.infinite(neg)
            return self.round(-(a / b) if neg else a / b, rounding, overflow, neg)
        if name in ("mul", "fma"):
            (a, na), (b, nb) = xs[:2]
            neg = na != nb
            if "inf" in (a, b):
                if 0 in (a, b):
                    return ("nan", False)
                product = ("inf", neg)
            else:
                product = (a * b, neg)
            if name == "mul":
                if product[0] == "inf":
                    return self.infinite(neg)
                return self.round(-product[0] if neg else product[0], rounding, overflow, neg)
            xs = [product, xs[2]]
        (a, na), (b, nb) = xs
        if a == "inf" or b == "inf":
            if a == "inf" and b == "inf" and na != nb:
                return ("nan", False)
            return self.infinite(na if a == "inf" else nb)
        total = (-a if na else a) + (-b if nb else b)
        both_zero = a == 0 and b == 0
        return self.round(total, rounding, overflow, zero_negative=both_zero and na and nb)

    def same(self, got: float, want) -> bool:
        """Does a decoded float64 ``got`` equal the model's result ``want`` (zeros' and NaNs' signs too)?"""
        value, sign = want
        if value == "nan":
            return math.isnan(got) and (sign is None or self.special == "fnuz"
                                        or (math.copysign(1.0, got) < 0) == sign)
        if math.isnan(got):
            return False
        negative = math.copysign(1.0, got) < 0
        if value == "inf":
            return math.isinf(got) and negative == sign
        return not math.isinf(got) and Fraction(abs(got)) == value and negative == sign

    def pattern_of(self, value: Fraction, negative: bool = False) -> int:
        """The pattern of a value of the format (exact; for building test cases)."""
        sign = (1 << (self.e + self.m)) if negative else 0
        if value == 0:
            return sign
        e = math.floor(math.log2(value))
        while Fraction(2) ** e > value:
            e -= 1
        while Fraction(2) ** (e + 1) <= value:
            e += 1
        if e < self.emin:
            man = value / Fraction(2) ** (self.emin - self.m)
            assert man.denominator == 1
            return sign | int(man)
        man = (value / Fraction(2) ** e - 1) * (1 << self.m)
        assert man.denominator == 1
        return sign | ((e + self.bias) << self.m) | int(man)
