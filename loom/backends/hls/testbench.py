"""The C-simulation testbench: a main() that fills the inputs, calls the top function, prints outputs.

Inputs are a deterministic function of (argument position, flat element index), computed the same
way here in Python (``csim_inputs``), so a test builds its numpy reference from the very
values the C++ saw:

    h = k * 2654435761 + (arg + 1) * 40503   (mod 2^32)
    floats (and fixed point):  ((h >> 8) % 257 - 128) / 64     -- exact multiples of 1/64 in [-2, 2]
    signed integers:           (h >> 8) % 201 - 100
    unsigned (ui) integers:    (h >> 8) % 201
    i1:                        (h >> 8) & 1
    integer scalars:           (h >> 8) % 16 + 1               -- small and positive (sizes, counts)

each converted into the element type (wrapping, or quantised and overflowed by the ap_fixed type's
modes). ``scalars={"n": 5}`` overrides a scalar argument. ``ranges={"I": (0, 8), "T": (0.0, 1.0)}`` draws
an array from [lo, hi) instead: integers ``lo + (h >> 8) % (hi - lo)``, floats (and fixed point)
``lo + (hi - lo) * ((h >> 8) % 256 / 256)``. Arrays the kernel uses as indices (gathers), or computes indices
from, must stay inside the arrays they index, or the C simulation stops at its range check. The testbench prints every array the
kernel may write and every result, floats as C99 hex (``%a``, exact), integers in decimal, fixed point as
its raw W-bit pattern in decimal (``x.range(W-1, 0)``: a double would drop the bits of formats wider than 53):

    array NAME COUNT        then COUNT lines
    result K                then one line
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from fractions import Fraction

import numpy as np

from loom.backends.hls.emitter import HlsProgram, Port
from loom.backends.hls.types import float_typedefs, hls_type_of, loom_float_of, quantise_fraction
from loom.errors import LoomError

_MULT, _ARG = 2654435761, 40503
_PORTS = "loomtb_ports"  # the testbench's namespace of the kernel's arrays


def _hash(k: np.ndarray, arg: int) -> np.ndarray:
    return ((k.astype(np.uint64) * _MULT + (arg + 1) * _ARG) & 0xFFFFFFFF) >> 8


def _category(st, mlir: str) -> str:
    if st.is_bool:
        return "bool"
    if loom_float_of(st) is not None:
        return "format"
    t = hls_type_of(st)
    if t is not None and t.is_fixed:
        return "fixed"
    if st.is_float:
        return "float"
    return "uint" if mlir.startswith("ui") else "int"


def _mlir_elem(port: Port) -> str:
    return port.elem.mlir


def _raw_values(port: Port, count: int, scalars: Mapping[str, float],
                ranges: Mapping[str, tuple[int, int]]) -> np.ndarray:
    """The testbench's values before conversion into the element type."""
    cat = _category(port.elem, _mlir_elem(port))
    if port.is_array and port.name in ranges:
        lo, hi = ranges[port.name]
        h = _hash(np.arange(count), port.index)
        if cat in ("float", "fixed", "format"):
            return float(lo) + (float(hi) - float(lo)) * ((h % 256).astype(np.float64) / 256.0)
        return (h % (hi - lo)).astype(np.int64) + lo
    if not port.is_array and port.name in scalars:
        if cat in ("float", "fixed", "format"):
            return np.array([scalars[port.name]], dtype=np.float64)
        return np.array([int(scalars[port.name])], dtype=object)  # 2^63..2^64-1 overflow int64; wrapped below
    h = _hash(np.arange(count), port.index)
    if cat in ("float", "fixed", "format"):
        return ((h % 257).astype(np.int64) - 128) / 64.0
    if cat == "bool":
        return (h & 1).astype(np.int64)
    if not port.is_array:
        return (h % 16).astype(np.int64) + 1
    if cat == "uint":
        return (h % 201).astype(np.int64)
    return (h % 201).astype(np.int64) - 100


def _convert(values: np.ndarray, st, mlir: str) -> np.ndarray:
    """Values as the element type holds them (what the C++ assignment makes of them)."""
    cat = _category(st, mlir)
    t = hls_type_of(st)
    if cat == "fixed":
        return np.array([_fixed_value(quantise_fraction(Fraction(float(v)), t), t) for v in values], dtype=_dtype(st))
    if cat == "format":  # rounded by the type's modes, as the C++ conversion from double does
        return np.array([t.format.decode(t.encode(v)) for v in values], dtype=np.float64)
    if cat == "float":
        return values.astype(st.np_dtype)
    if cat == "bool":
        return values.astype(np.bool_)
    bits = st.bits
    wrapped = [int(v) & ((1 << bits) - 1) for v in values]
    if cat == "int":
        wrapped = [w - (1 << bits) if w >= 1 << (bits - 1) else w for w in wrapped]
    return np.array(wrapped, dtype=st.np_dtype)


def csim_inputs(program: HlsProgram, scalars: Mapping[str, float] | None = None,
                ranges: Mapping[str, tuple[int, int]] | None = None,
                inputs: Mapping[str, np.ndarray] | None = None) -> dict[str, np.ndarray]:
    """Every argument's initial value as numpy (arrays in their shapes, scalars as 0-d arrays)."""
    scalars, ranges = dict(scalars or {}), dict(ranges or {})
    _check_scalars(program, scalars)
    _check_ranges(program, ranges)
    given = _check_inputs(program, inputs, ranges)
    out = {}
    for port in program.ports:
        count = port.count if port.is_array else 1
        raw = given[port.name] if port.name in given else _raw_values(port, count, scalars, ranges)
        values = _convert(raw, port.elem, _mlir_elem(port))
        if port.is_array and program.options.interface == "axis" and not port.reads:
            values = np.zeros_like(values)  # the kernel's local copy of an output it does not read starts at 0
        out[port.name] = values.reshape(port.spec.memref.shape) if port.is_array else values.reshape(())
    return out


def _check_scalars(program: HlsProgram, scalars: Mapping[str, float]) -> None:
    ports = {p.name: p for p in program.ports if not p.is_array}
    for name, value in scalars.items():
        if name not in ports:
            raise LoomError(f"no scalar argument {name!r}; the top function's scalars are "
                            f"{', '.join(sorted(ports)) or 'none'}", where="scalars")
        # else a NaN would not compile, 2.5 would become 2 and 2**40 would wrap in an i32
        st = ports[name].elem
        where = f"scalars[{name!r}]"
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
            raise LoomError(f"expected a number for the {st.mlir} scalar, got {type(value).__name__} {value!r}",
                            where=where)
        cat = _category(st, _mlir_elem(ports[name]))
        if cat in ("float", "fixed", "format"):
            if not math.isfinite(value):
                raise LoomError(f"expected a finite number, got {value!r}", where=where)
            continue
        low, high = (0, 1) if cat == "bool" else (-(1 << (st.bits - 1)), (1 << st.bits) - 1)
        if not float(value).is_integer() or not low <= int(value) <= high:
            raise LoomError(f"expected an integer in {low}..{high} for the {st.mlir} scalar, got {value!r}",
                            where=where)


def _check_inputs(program: HlsProgram, inputs, ranges) -> dict[str, np.ndarray]:
    """``inputs``: {array name: values} the testbench starts with instead of its own (NaN and infinities
    included), each converted into the element type as the C++ conversion does; checked, flattened."""
    arrays = {p.name: p for p in program.ports if p.is_array}
    out = {}
    for name, values in dict(inputs or {}).items():
        where = f"inputs[{name!r}]"
        if name not in arrays:
            raise LoomError(f"no array argument {name!r}; the top function's arrays are "
                            f"{', '.join(sorted(arrays)) or 'none'}", where=where)
        if name in ranges:
            raise LoomError(f"{name!r} has both given values and a range; give one", where=where)
        port = arrays[name]
        try:
            flat = np.asarray(values).ravel()
        except Exception as error:  # ragged lists and the like
            raise LoomError(f"expected an array of numbers: {error}", where=where) from None
        if flat.size != port.count or flat.dtype.kind not in "biuf":
            raise LoomError(f"expected {port.count} numbers (shape {list(port.spec.memref.shape)}) for "
                            f"{port.elem.mlir}, got {flat.size} of {flat.dtype}", where=where)
        cat = _category(port.elem, _mlir_elem(port))
        if cat in ("float", "format"):
            flat = flat.astype(np.float64)
        elif cat == "fixed":
            flat = flat.astype(np.float64)
            if not np.all(np.isfinite(flat)) or hls_type_of(port.elem).width > 53:
                raise LoomError(f"given values of {hls_type_of(port.elem).ctype} must be finite, and the type at "
                                "most 53 bits wide (the testbench writes them as doubles)", where=where)
        else:
            if flat.dtype.kind == "f" and not np.all(np.isfinite(flat) & (flat == np.round(flat))):
                raise LoomError(f"expected integers for {port.elem.mlir}", where=where)
            flat = np.array([int(v) for v in flat], dtype=object)
        out[name] = flat
    return out


def _literal(port: Port, value) -> str:
    """A given input as a C++ initialiser: a format's pattern, a float's exact hex, an integer."""
    cat = _category(port.elem, _mlir_elem(port))
    if cat == "format":
        return f"{loom_float_of(port.elem).encode(value)}u"
    if cat in ("float", "fixed"):
        v = float(value)
        if math.isnan(v):
            return "-NAN" if math.copysign(1.0, v) < 0 else "NAN"
        if math.isinf(v):
            return "-INFINITY" if v < 0 else "INFINITY"
        return float.hex(v)
    return f"(long long){int(value) & ((1 << 64) - 1)}ULL"


def _check_ranges(program: HlsProgram, ranges: Mapping[str, tuple[int, int]]) -> None:
    arrays = {p.name: p for p in program.ports if p.is_array and _category(p.elem, _mlir_elem(p)) != "bool"}
    for name, bounds in ranges.items():
        where = f"ranges[{name!r}]"
        if name not in arrays:
            raise LoomError(f"no integer or float array argument {name!r}; the top function's are "
                            f"{', '.join(sorted(arrays)) or 'none'}", where=where)
        cat = _category(arrays[name].elem, _mlir_elem(arrays[name]))
        if cat in ("float", "fixed", "format"):
            ok = (isinstance(bounds, (tuple, list)) and len(bounds) == 2
                  and all(isinstance(b, (int, float, np.integer, np.floating)) and not isinstance(b, bool)
                          and math.isfinite(b) for b in bounds) and bounds[0] < bounds[1])
            if not ok:
                raise LoomError(f"expected finite (lo, hi) with lo < hi, got {bounds!r}", where=where)
            continue
        if (not isinstance(bounds, (tuple, list)) or len(bounds) != 2
                or not all(isinstance(b, (int, np.integer)) and not isinstance(b, bool) for b in bounds)):
            raise LoomError(f"expected (lo, hi) integers, got {bounds!r}", where=where)
        lo, hi = (int(b) for b in bounds)
        st = arrays[name].elem
        low = 0 if _category(st, _mlir_elem(arrays[name])) == "uint" else -(1 << (st.bits - 1))
        high = (1 << st.bits) - 1 if low == 0 else (1 << (st.bits - 1)) - 1
        if not (low <= lo < hi <= high + 1 and hi - lo <= 1 << 24):  # the C spans the range in 32-bit hashes
            raise LoomError(f"expected {low} <= lo < hi <= {high + 1} (at most 2^24 values) for {st.mlir}, "
                            f"got ({lo}, {hi})", where=where)


def _c_value(port: Port, scalars: Mapping[str, float], k: str, ranges: Mapping[str, tuple[int, int]]) -> str:
    cat = _category(port.elem, _mlir_elem(port))
    if port.is_array and port.name in ranges:
        lo, hi = ranges[port.name]
        if cat in ("float", "fixed", "format"):  # the same double operations as csim_inputs, so the same values
            return (f"({float(lo)!r} + {float(hi) - float(lo)!r} * "
                    f"((double)(loomtb_hash({k}, {port.index}u) % 256u) / 256.0))")
        return f"((long long)(loomtb_hash({k}, {port.index}u) % {hi - lo}u) + ({lo}LL))"
    if not port.is_array and port.name in scalars:
        value = scalars[port.name]
        if cat in ("float", "fixed", "format"):
            return repr(float(value))
        # the 64-bit pattern: -2^63 and values from 2^63 on are no signed literals ("so large that it is unsigned")
        return f"(long long){int(value) & ((1 << 64) - 1)}ULL"
    h = f"loomtb_hash({k}, {port.index}u)"
    if cat in ("float", "fixed", "format"):
        return f"((double)((int)({h} % 257u) - 128) / 64.0)"
    if cat == "bool":
        return f"(int)({h} & 1u)"
    if not port.is_array:
        return f"(long long)({h} % 16u + 1u)"
    if cat == "uint":
        return f"(long long)({h} % 201u)"
    return f"((long long)({h} % 201u) - 100)"


def _print(st, mlir: str, expr: str) -> str:
    cat = _category(st, mlir)
    if cat == "fixed":
        width = hls_type_of(st).width
        return f'std::printf("%llu\\n", ({expr}).range({width - 1}, 0).to_uint64());'
    if cat == "format":  # the W-bit pattern
        return f'std::printf("%u\\n", (unsigned)({expr}).to_bits());'
    if cat == "float":
        return f'std::printf("%a\\n", (double)({expr}));'
    if cat == "bool":
        return f'std::printf("%d\\n", (int)({expr}));'
    if cat == "uint":
        return f'std::printf("%llu\\n", (unsigned long long)({st.utype})({expr}));'
    return f'std::printf("%lld\\n", (long long)({expr}));'


def emit_testbench(program: HlsProgram, scalars: Mapping[str, float] | None = None,
                   ranges: Mapping[str, tuple[int, int]] | None = None,
                   inputs: Mapping[str, np.ndarray] | None = None) -> str:
    """C++ source of the C-simulation main() for ``program`` (compile it with the kernel's .cpp).
    ``inputs``: arrays given by value instead of the testbench's hash (``_check_inputs``)."""
    scalars, ranges = dict(scalars or {}), dict(ranges or {})
    _check_scalars(program, scalars)
    _check_ranges(program, ranges)
    given = _check_inputs(program, inputs, ranges)
    axis = program.options.interface == "axis"
    lines = [
        f"// C-simulation testbench of {program.top}, generated by loom (inputs: see loom.backends.hls.testbench).",
        "#include <ap_int.h>", "#include <ap_fixed.h>", "#include <hls_stream.h>",
        *(['#include "loom_float.h"', *float_typedefs(program.options.types.values())]
          if program.uses_loom_float else []),
        "#include <cstdint>", "#include <cstdio>", *(["#include <cmath>"] if given else []), "",
        program.prototype, "",
        "static inline uint32_t loomtb_hash(uint32_t k, uint32_t arg) { return (k * 2654435761u + (arg + 1u) * 40503u) >> 8; }",
        "",
    ]
    # arrays live in static storage (a testbench of large images must not overflow the stack), in a
    # namespace of their own: a port may be called like a library function (exp, index, remove)
    lines.append(f"namespace {_PORTS} {{")
    for port in program.ports:
        if port.is_array:
            lines.append(f"static {port.elem.ctype} {port.name}[{port.count}];")
            if port.name in given:
                cat = _category(port.elem, _mlir_elem(port))
                ctype = {"format": "uint32_t", "float": "double", "fixed": "double"}.get(cat, "long long")
                body = ", ".join(_literal(port, v) for v in given[port.name])
                lines.append(f"static const {ctype} loomtb_given_{port.name}[{port.count}] = {{{body}}};")
    lines += ["}", "", "int main() {"]
    args = []
    for port in program.ports:
        var = f"{_PORTS}::{port.name}"
        if port.is_array and port.name in given:
            value = f"{_PORTS}::loomtb_given_{port.name}[k]"
            if _category(port.elem, _mlir_elem(port)) == "format":  # the pattern itself
                value = f"{port.elem.ctype}::from_bits({value})"
            else:
                value = f"({port.elem.ctype}){value}"
            lines.append(f"  for (uint32_t k = 0; k != {port.count}u; k++) {var}[k] = {value};")
        elif port.is_array:
            lines.append(f"  for (uint32_t k = 0; k != {port.count}u; k++) {var}[k] = "
                         f"({port.elem.ctype}){_c_value(port, scalars, 'k', ranges)};")
        if port.is_array:
            if axis:
                if port.reads:
                    lines.append(f'  hls::stream<{port.elem.ctype}> {port.name}_in("{port.name}_in");')
                    lines.append(f"  for (uint32_t k = 0; k != {port.count}u; k++) {port.name}_in.write({var}[k]);")
                    args.append(f"{port.name}_in")
                if port.writes:
                    lines.append(f'  hls::stream<{port.elem.ctype}> {port.name}_out("{port.name}_out");')
                    args.append(f"{port.name}_out")
            else:
                args.append(var)
        else:
            lines.append(f"  {port.elem.ctype} {port.name} = ({port.elem.ctype}){_c_value(port, scalars, '0u', ranges)};")
            args.append(port.name)
    results = list(program.results)
    if len(results) > 1:  # several results come back through out-pointers
        lines += [f"  {st.ctype} out{k};" for k, st in enumerate(results)]
        args += [f"&out{k}" for k in range(len(results))]
    call = f"{program.top}({', '.join(args)})"
    lines.append(f"  {results[0].ctype} out0 = {call};" if len(results) == 1 else f"  {call};")
    for port in program.ports:
        if not (port.is_array and port.writes):
            continue
        var = f"{_PORTS}::{port.name}"
        if axis:
            lines += [f"  for (uint32_t k = 0; k != {port.count}u; k++) {var}[k] = {port.name}_out.read();",
                      f"  if (!{port.name}_out.empty()) {{",
                      f'    std::fprintf(stderr, "{port.name}_out: more than {port.count} elements written\\n");',
                      "    return 1;", "  }"]
        lines.append(f'  std::printf("array {port.name} {port.count}\\n");')
        lines.append(f"  for (uint32_t k = 0; k != {port.count}u; k++) {_print(port.elem, _mlir_elem(port), var + '[k]')}")
    for port in program.ports:
        if axis and port.is_array and port.reads and not port.writes:
            lines += [f"  if (!{port.name}_in.empty()) {{",
                      f'    std::fprintf(stderr, "{port.name}_in: the kernel did not read every element\\n");',
                      "    return 1;", "  }"]
    for k, st in enumerate(results):
        lines.append(f'  std::printf("result {k}\\n");')
        lines.append("  " + _print(st, st.mlir, f"out{k}"))
    lines += ["  return 0;", "}", ""]
    return "\n".join(lines)


def parse_output(program: HlsProgram, text: str) -> tuple[dict[str, np.ndarray], list]:
    """The testbench's printout as {array name: values in its shape} and the list of results."""
    ports = {p.name: p for p in program.ports}
    lines = text.splitlines()
    arrays: dict[str, np.ndarray] = {}
    results: list = []
    pos = 0
    try:
        while pos < len(lines):
            words = lines[pos].split()
            pos += 1
            if not words:
                continue
            if words[0] == "array":
                port = ports[words[1]]
                count = int(words[2])
                values = [_parse_value(port.elem, _mlir_elem(port), s) for s in lines[pos:pos + count]]
                if len(values) != count:
                    raise ValueError("short array")
                pos += count
                arrays[port.name] = np.array(values, dtype=_dtype(port.elem)).reshape(port.spec.memref.shape)
            elif words[0] == "result":
                st = program.results[int(words[1])]
                results.append(_parse_value(st, st.mlir, lines[pos]))
                pos += 1
            else:
                raise ValueError(f"unexpected line {lines[pos - 1]!r}")
    except (KeyError, IndexError, ValueError) as error:
        raise LoomError(f"cannot read the testbench's output at line {pos}: {error}") from None
    return arrays, results


def _exact_in_double(t) -> bool:
    return t.width <= 53  # every raw * 2^-frac of the type is a double


def _dtype(st) -> np.dtype:
    """Fixed point as float64 when that is exact, else as exact Fractions (an object array)."""
    t = hls_type_of(st)
    if t is not None and t.is_fixed:
        return np.dtype(np.float64) if _exact_in_double(t) else np.dtype(object)
    return st.np_dtype


def _fixed_value(value: Fraction, t):
    return float(value) if _exact_in_double(t) else value


def _parse_value(st, mlir: str, text: str):
    cat = _category(st, mlir)
    if cat == "format":  # the pattern, as its exact value (NaN and zeros keep their signs)
        fmt = loom_float_of(st).format
        raw = int(text.strip())
        if not 0 <= raw < 1 << fmt.width:
            raise ValueError(f"{text.strip()!r} is not a {fmt.width}-bit pattern of {fmt}")
        return fmt.decode(raw)
    if cat == "fixed":
        t = hls_type_of(st)
        raw = int(text.strip())
        if not 0 <= raw < 1 << t.width:
            raise ValueError(f"{text.strip()!r} is not a {t.width}-bit pattern of {t.ctype}")
        if t.signed and raw >> (t.width - 1):
            raw -= 1 << t.width
        return _fixed_value(Fraction(raw) / Fraction(2) ** t.frac_bits, t)
    if cat == "float":
        return float.fromhex(text.strip())
    return int(text.strip())
