"""MLIR scalar types as HLS C++ types: C's types, ``ap_int``/``ap_uint`` and ``ap_fixed``/``ap_ufixed``.

The C backend's handlers read every type through the module's resolver (``ModuleContext.types``);
the HLS backend's resolver is ``HlsTypes``:

- integers of the C widths (8/16/32/64), ``i1``, ``index``, ``f32``, ``f64``: the C types;
- integers of any other width 2..64 (``i12``, ``si3``, ``ui24``): ``ap_int<W>`` (values are
  signless in MLIR; the unsigned twin ``ap_uint<W>`` serves unsigned ops, as ``uint32_t`` does in C);
- the ``types`` option maps an MLIR spelling to an HLS type: ``{"f32": "ap_fixed<16,8>"}`` computes
  a float kernel in fixed point, ``{"i32": "ap_int<24>"}`` narrows an integer type;
- a float type may also map to a loom custom float format (``HlsFloat``, from ``hls_type_of_format``): the
  ``loom_float<E, M, BIAS, SPECIAL, RND, OVF>`` of ``include/loom_float.h``;
- further rules (``register_type_rule``) map other attribute kinds, e.g. a number-format dialect's
  fixed-point types, to an ``HlsType``; they are asked first.
"""

from __future__ import annotations

import ctypes
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np
from xdsl.dialects.builtin import IntegerType
from xdsl.ir import Attribute

from loom.backends.c.c_types import ScalarType, scalar_type
from loom.core.scalars import Scalar
from loom.errors import LoomError

QUANTISATION = ("AP_TRN", "AP_TRN_ZERO", "AP_RND", "AP_RND_ZERO", "AP_RND_MIN_INF", "AP_RND_INF", "AP_RND_CONV")
OVERFLOW = ("AP_WRAP", "AP_SAT", "AP_SAT_ZERO", "AP_SAT_SYM")
MAX_BITS = 64  # loom_hls.h's limit (Vitis goes to 1024)


@dataclass(frozen=True)
class HlsType:
    """An arbitrary-precision HLS type: ``kind`` is int, uint, fixed or ufixed."""

    kind: str
    width: int
    int_bits: int = 0  # fixed: bits before the binary point (may be negative or exceed the width)
    quantisation: str = "AP_TRN"
    overflow: str = "AP_WRAP"

    def __post_init__(self):
        if not 1 <= self.width <= MAX_BITS:
            raise LoomError(f"{self.ctype}: widths are 1..{MAX_BITS} bits in loom's HLS backend")
        if self.quantisation not in QUANTISATION:
            raise LoomError(f"unknown quantisation mode {self.quantisation!r}; expected one of {', '.join(QUANTISATION)}")
        if self.overflow not in OVERFLOW:
            raise LoomError(f"unknown overflow mode {self.overflow!r}; expected one of {', '.join(OVERFLOW)}")

    @property
    def is_fixed(self) -> bool:
        return self.kind in ("fixed", "ufixed")

    @property
    def signed(self) -> bool:
        return self.kind in ("int", "fixed")

    @property
    def frac_bits(self) -> int:
        return self.width - self.int_bits if self.is_fixed else 0

    @property
    def ctype(self) -> str:
        if not self.is_fixed:
            return f"ap_{self.kind}<{self.width}>"
        modes = ""
        if (self.quantisation, self.overflow) != ("AP_TRN", "AP_WRAP"):
            modes = f", {self.quantisation}, {self.overflow}"
        return f"ap_{self.kind}<{self.width}, {self.int_bits}{modes}>"

    def twin(self) -> HlsType:
        """The unsigned type of the same width (wrapping integer arithmetic in the C emitter)."""
        return HlsType("uint", self.width) if self.kind == "int" else self


def full_precision(op: str, t: HlsType) -> tuple[int, int, bool]:
    """(width, integer bits, signed) of loom_hls.h's exact result of ``a op b`` (``-a`` for neg) with a and b
    of fixed-point type ``t`` (fixed_sum / fixed_product / unary - in the header; Vitis' rules)."""
    w, i, s = t.width, t.int_bits, t.signed
    if op == "mul":
        return 2 * w, 2 * i, s
    if op == "neg":
        return w + 1, i + 1, True
    signed = s or op == "sub"  # a difference may be negative
    ibits = i + (signed and not s) + 1
    return ibits + (w - i), ibits, signed


def fixed_sum(a: tuple[int, int, bool], b: tuple[int, int, bool]) -> tuple[int, int, bool]:
    """(width, integer bits, signed) of loom_hls.h's exact sum of fixed-point values of (width, integer
    bits, signed) ``a`` and ``b`` (fixed_sum in the header; Vitis' rule)."""
    (w1, i1, s1), (w2, i2, s2) = a, b
    signed = s1 or s2
    frac = max(w1 - i1, w2 - i2)
    ibits = max(i1 + (signed and not s1), i2 + (signed and not s2)) + 1
    return ibits + frac, ibits, signed


_TEXT = re.compile(r"^\s*ap_(int|uint|fixed|ufixed)\s*<\s*(-?\d+)\s*(?:,\s*(-?\d+)\s*)?"
                   r"(?:,\s*(\w+)\s*)?(?:,\s*(\w+)\s*)?>\s*$")


def parse_hls_type(text: str, where: str | None = None) -> HlsType:
    """``ap_int<12>``, ``ap_uint<7>``, ``ap_fixed<16,8>``, ``ap_fixed<16,8,AP_RND,AP_SAT>``, ``ap_ufixed<8,2>``."""
    m = _TEXT.match(text)
    if m is None:
        raise LoomError(f"not an HLS type: {text!r}; expected ap_int<W>, ap_uint<W>, ap_fixed<W,I[,Q,O]> or "
                        f"ap_ufixed<W,I[,Q,O]>", where=where)
    kind, width, ibits, q, o = m.groups()
    fixed = kind in ("fixed", "ufixed")
    if fixed != (ibits is not None) or (not fixed and (q or o)):
        raise LoomError(f"{text!r}: ap_{kind} takes {'<W, I[, Q, O]>' if fixed else '<W>'}", where=where)
    try:
        return HlsType(kind, int(width), int(ibits or 0), q or "AP_TRN", o or "AP_WRAP")
    except LoomError as err:
        raise LoomError(err.message, where=where) from None


_ROUNDING_TO_Q = {"nearest_even": "AP_RND_CONV", "truncate": "AP_TRN", "nearest_away": "AP_RND_INF"}
_OVERFLOW_TO_O = {"wrap": "AP_WRAP", "saturate": "AP_SAT"}


def ap_type_of_format(text: str, rounding: str = "nearest_even", overflow: str | None = None) -> str:
    """The ap_fixed spelling of a loom fixed-point format (``fixed<10, 4>`` -> ``ap_fixed<14,10,AP_RND_CONV,
    AP_WRAP>``) with base2's modes: ``nearest_even`` is AP_RND_CONV, ``truncate`` AP_TRN (floor, as base2's
    two's-complement truncation), ``nearest_away`` AP_RND_INF; ``wrap`` AP_WRAP, ``saturate`` AP_SAT. A custom
    float has no ap_* spelling: a LoomError names ``hls_type_of_format`` (its ``loom_float`` type)."""
    from loom.core.numformats import FixedFormat, check_modes, default_overflow, parse_format

    fmt = parse_format(text, where="--format")
    if not isinstance(fmt, FixedFormat):
        raise LoomError(f"{fmt} is a float format, which has no ap_fixed / ap_int spelling: its HLS type is "
                        f"hls_type_of_format({text!r}) (loom_float, include/loom_float.h)", where="--format")
    overflow = overflow or default_overflow(fmt)
    check_modes(fmt, rounding, overflow, "--format")
    kind = "fixed" if fmt.signed else "ufixed"
    return f"ap_{kind}<{fmt.width},{fmt.int_bits},{_ROUNDING_TO_Q[rounding]},{_OVERFLOW_TO_O[overflow]}>"


def quantise_fraction(value, t: HlsType):
    """Exact model of loom_hls.h's conversion of a rational into ``t`` (quantisation, then overflow)."""
    from fractions import Fraction
    import math

    scaled = Fraction(value) * (Fraction(2) ** t.frac_bits)
    floor = math.floor(scaled)
    rem = scaled - floor
    up = {
        "AP_TRN": False,
        "AP_TRN_ZERO": rem != 0 and scaled < 0,
        "AP_RND": rem >= Fraction(1, 2),
        "AP_RND_MIN_INF": rem > Fraction(1, 2),
        "AP_RND_ZERO": rem > Fraction(1, 2) or (rem == Fraction(1, 2) and scaled < 0),
        "AP_RND_INF": rem > Fraction(1, 2) or (rem == Fraction(1, 2) and scaled > 0),
        "AP_RND_CONV": rem > Fraction(1, 2) or (rem == Fraction(1, 2) and floor % 2 == 1),
    }[t.quantisation]
    raw = floor + 1 if up and rem != 0 else floor
    lo = -(1 << (t.width - 1)) if t.signed else 0
    hi = (1 << (t.width - 1)) - 1 if t.signed else (1 << t.width) - 1
    if raw < lo or raw > hi or (t.overflow == "AP_SAT_SYM" and t.signed and raw == lo):
        if t.overflow == "AP_SAT":
            raw = lo if raw < lo else hi
        elif t.overflow == "AP_SAT_ZERO":
            raw = 0
        elif t.overflow == "AP_SAT_SYM":
            raw = (-hi if t.signed else lo) if raw <= lo else hi  # the minimum itself becomes -max, as in the header
        else:
            raw &= (1 << t.width) - 1
            if t.signed and raw >= 1 << (t.width - 1):
                raw -= 1 << t.width
    return Fraction(raw) / (Fraction(2) ** t.frac_bits)


_SPECIAL_ENUM = {"ieee": "LOOM_IEEE", "fn": "LOOM_FN", "fnuz": "LOOM_FNUZ"}
_ROUNDING_ENUM = {"truncate": "LOOM_RND_TRUNCATE", "nearest_even": "LOOM_RND_NEAREST_EVEN",
                  "nearest_away": "LOOM_RND_NEAREST_AWAY"}
_OVERFLOW_ENUM = {"inf": "LOOM_OVF_INF", "saturate": "LOOM_OVF_SATURATE"}


@dataclass(frozen=True)
class HlsFloat:
    """A loom custom float format as an HLS C++ type: ``loom_float<E, M, BIAS, SPECIAL, RND, OVF>``
    (include/loom_float.h), every result rounded by ``rounding`` and ``overflow`` as base2 does."""

    format: object  # a loom.core.numformats.FloatFormat
    rounding: str = "nearest_even"
    overflow: str = "inf"

    def __post_init__(self):
        from loom.core.numformats import FloatFormat, check_modes

        if not isinstance(self.format, FloatFormat):
            raise LoomError(f"HlsFloat takes a float format, not {self.format!r}")
        check_modes(self.format, self.rounding, self.overflow, str(self.format))

    kind = "float"
    is_fixed = False
    signed = True
    int_bits = 0
    frac_bits = 0

    @property
    def width(self) -> int:
        return self.format.width

    @property
    def template(self) -> str:
        f = self.format
        return (f"loom_float<{f.exp_bits}, {f.man_bits}, {f.bias}, {_SPECIAL_ENUM[f.special]}, "
                f"{_ROUNDING_ENUM[self.rounding]}, {_OVERFLOW_ENUM[self.overflow]}>")

    @property
    def ctype(self) -> str:
        """The name the generated C++ uses (``typedef``: ``loomf_e4m3_b7_fn_rne_inf``, ``typedef_line``)."""
        f = self.format
        rounding = {"nearest_even": "rne", "nearest_away": "rna", "truncate": "rtz"}[self.rounding]
        overflow = {"inf": "inf", "saturate": "sat"}[self.overflow]
        return f"loomf_e{f.exp_bits}m{f.man_bits}_b{f.bias}_{f.special}_{rounding}_{overflow}"

    @property
    def typedef_line(self) -> str:
        return f"typedef {self.template} {self.ctype};"

    def twin(self) -> "HlsFloat":
        return self

    def encode(self, value: float) -> int:
        """The pattern of a float64 value converted into the type (its rounding and overflow)."""
        return self.format.encode(float(value), self.rounding, self.overflow)


def hls_type_of_format(text: str, rounding: str = "nearest_even", overflow: str | None = None,
                       where: str = "--format") -> "HlsType | HlsFloat":
    """The HLS type computing in a loom format: ``ap_fixed``/``ap_ufixed`` for fixed point
    (``ap_type_of_format``), ``loom_float<...>`` for a custom float (``HlsFloat``)."""
    from loom.core.numformats import FixedFormat, check_modes, default_overflow, parse_format

    fmt = parse_format(text, where=where)
    overflow = overflow or default_overflow(fmt)
    check_modes(fmt, rounding, overflow, where)
    if isinstance(fmt, FixedFormat):
        return parse_hls_type(ap_type_of_format(text, rounding, overflow), where)
    return HlsFloat(fmt, rounding, overflow)


def computes_in_floats(module) -> bool:
    """Does some value of the module (or an element of a memref) have type f32 or f64, so that a number
    format has something to compute in?"""
    from xdsl.dialects.builtin import Float32Type, Float64Type, MemRefType

    def is_float(ty) -> bool:
        return isinstance(ty.element_type if isinstance(ty, MemRefType) else ty, Float32Type | Float64Type)

    for op in module.walk():
        values = [*op.results, *(arg for region in op.regions for block in region.blocks for arg in block.args)]
        if any(is_float(v.type) for v in values):
            return True
    return False


def uses_loom_float(types) -> bool:
    return any(isinstance(t, HlsFloat) for t in types)


def float_typedefs(types) -> list[str]:
    """The typedef lines of the custom float formats among ``types`` (kernel file and testbench)."""
    return sorted({t.typedef_line for t in types if isinstance(t, HlsFloat)})


TypeRule = Callable[[Attribute], "HlsType | None"]
TYPE_RULES: list[TypeRule] = []


def register_type_rule(rule: TypeRule) -> TypeRule:
    """Teach the HLS backend another kind of type (e.g. a number-format dialect's fixed point)."""
    TYPE_RULES.append(rule)
    return rule


def _numpy_dtype(t: HlsType) -> np.dtype:
    """The numpy dtype the testbench's values of ``t`` are compared in."""
    if t.is_fixed or isinstance(t, HlsFloat):
        return np.dtype(np.float64)
    bits = next(b for b in (8, 16, 32, 64) if b >= t.width)
    return np.dtype(f"{'int' if t.signed else 'uint'}{bits}")


class HlsScalar(ScalarType):
    """A ScalarType whose C++ spelling is an ap_* type (what the shared handlers read)."""

    def __init__(self, mlir: str, t: "HlsType | HlsFloat", float_like: bool):
        kind = "float" if float_like else ("int" if t.signed else "uint")
        dtype = _numpy_dtype(t)
        core = Scalar(mlir, kind, t.width, dtype, t.ctype, t.twin().ctype, ctypes.c_double)
        object.__setattr__(self, "core", core)
        object.__setattr__(self, "hls", t)


def _hls_type_text(text: str, where: str) -> HlsType:
    """An ap_* spelling; a loom number format there is refused with the way to give one."""
    try:
        return parse_hls_type(text, where)
    except LoomError as error:
        from loom.core.numformats import parse_format

        try:
            parse_format(text)
        except LoomError:
            raise error from None
        raise LoomError(f"{text!r} is a loom number format, not an HLS type: give it as "
                        f"hls_type_of_format({text.strip()!r}, rounding, overflow) (loom hls --format), which "
                        "also chooses its rounding and overflow", where=where) from None


class HlsTypes:
    """The HLS backend's type resolver (``ModuleContext.types``): MLIR type -> ScalarType."""

    def __init__(self, mapping: Mapping[str, "str | HlsType | HlsFloat"] | None = None):
        self.mapping: dict[str, HlsType | HlsFloat] = {}
        for key, value in (mapping or {}).items():
            where = f"types[{key!r}]"
            t = value if isinstance(value, HlsType | HlsFloat) else _hls_type_text(str(value), where)
            if isinstance(t, HlsFloat):
                if key not in ("f32", "f64"):
                    raise LoomError(f"a custom float format computes f32 or f64 values, not {key}", where=where)
                self.mapping[key] = t
                continue
            if key in ("f16", "bf16", "f32", "f64"):
                if not t.is_fixed:
                    raise LoomError(f"a float type maps to ap_fixed/ap_ufixed, not {t.ctype}", where=where)
            elif re.fullmatch(r"[su]?i\d+", key) and key != "i1":
                if t.is_fixed:
                    raise LoomError(f"an integer type maps to ap_int/ap_uint, not {t.ctype}", where=where)
                if t.kind == "uint" and not key.startswith("ui"):
                    # the emitter reads a signless value as signed through its type (slt, divsi, extsi)
                    raise LoomError(f"{key} is signless (its ops choose the signedness) and maps to "
                                    f"ap_int<{t.width}>; ap_uint serves ui types", where=where)
            else:
                raise LoomError(f"cannot map {key!r}: keys are MLIR float or integer spellings (f32, i32, ...)",
                                where=where)
            self.mapping[key] = t

    @property
    def floats(self) -> bool:
        """Does some type compute in a loom custom float format (loom_float.h)?"""
        return uses_loom_float(self.mapping.values())

    def __call__(self, ty: Attribute, where: str = "") -> ScalarType:
        for rule in TYPE_RULES:
            t = rule(ty)
            if t is not None:
                return HlsScalar(str(ty), t, t.is_fixed)
        spelling = str(ty)
        if spelling in self.mapping:
            t = self.mapping[spelling]
            if isinstance(t, HlsFloat):
                _check_exact(t, ty, where)
            return HlsScalar(spelling, t, t.is_fixed or isinstance(t, HlsFloat))
        if isinstance(ty, IntegerType) and ty.width.data not in (1, 8, 16, 32, 64):
            if ty.width.data > MAX_BITS:
                raise LoomError(f"{ty}: integers wider than {MAX_BITS} bits are not supported by loom's HLS "
                                "backend", where=where or None)
            # signless like the C backend (ops pick signedness through the unsigned twin); the
            # testbench prints a ``ui`` type's values unsigned
            return HlsScalar(spelling, HlsType("int", ty.width.data), False)
        st = scalar_type(ty, where)
        if st.mlir == "f16":
            raise LoomError("f16 has no C++ type in g++ 12; map it to a fixed-point type "
                            "(types={'f16': 'ap_fixed<16,6>'})", where=where or None)
        return st


def _check_exact(t: HlsFloat, ty: Attribute, where: str) -> None:
    """A kernel's f32 values computed in a format need every value of the format to be an f32 (as
    convert-float-to-base2 requires): the ops the format has no arithmetic for compute in f32."""
    from loom.passes.convert_float_to_base2 import exact_in

    if not exact_in(t.format, ty):
        raise LoomError(f"{t.format} values are not all exact in {ty}: the ops the format has no arithmetic for "
                        f"(max, exp, comparisons, conversions) compute in {ty} (compute in f64, or pick a "
                        "narrower format)", where=where or f"types[{str(ty)!r}]")


def loom_float_of(st: ScalarType) -> HlsFloat | None:
    """The custom float format behind a resolved scalar (None for every other type)."""
    t = getattr(st, "hls", None)
    return t if isinstance(t, HlsFloat) else None


def hls_type_of(st: ScalarType) -> HlsType | None:
    """The ap_* type behind a resolved scalar (None for C's own types)."""
    return getattr(st, "hls", None)
