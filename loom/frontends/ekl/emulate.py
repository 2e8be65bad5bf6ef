"""An EKL kernel evaluated in an emulated number format: bf16 or fixed point, every operation rounded.

The compiled kernels know f64 and f32 only; to see what a narrower format does
to a kernel, this evaluates its elaborated form with numpy in float64 and rounds
*every* floating-point result to the format: inputs, constants, each arithmetic
operation and function, casts to float, and each step of a reduction (reductions
run sequentially, one combine at a time, as a loop nest does; not pairwise).

- ``bf16``: round to nearest even at 8 significant bits (bfloat16's significand;
  its exponent range is f32's and is not modelled: no overflow or subnormals
  at the magnitudes EKL kernels are explored with).
- ``fixed<W,F>`` / ``fixedW.F``: W-bit two's complement with F fraction bits (value n * 2^-F; W *total*
  bits, unlike ``loom.core.numformats``' ``fixed<I, F>`` with I integer bits: rows are named ``fixedW.F``),
  round to nearest even, saturating at the ends of the range (saturations are
  counted). Emulated in float64: exact while magnitudes stay below 2^(53-F);
  a product of two fixed values is rounded twice (to float64, then to the grid),
  which differs from exact integer arithmetic only at a tie.
"""

from __future__ import annotations

import math

import re
from dataclasses import dataclass, field

import numpy as np

from loom.errors import LoomError
from loom.frontends.ekl import form as F
from loom.frontends.ekl.reference import (
    _BIN, _Eval, check_congruence, extent_value, index_grid, reduction_identity)


@dataclass
class Format:
    """A number format: ``significant_bits`` (floating) or ``total_bits`` / ``fraction_bits`` (fixed)."""

    name: str
    significant_bits: int | None = None
    total_bits: int | None = None
    fraction_bits: int | None = None
    saturations: int = field(default=0, compare=False)

    def quantize(self, x) -> np.ndarray:
        x = np.asarray(x, dtype=np.float64)
        if self.significant_bits is not None:
            mantissa, exponent = np.frexp(x)  # x = mantissa * 2^exponent, |mantissa| in [0.5, 1)
            scale = float(2 ** self.significant_bits)
            return np.ldexp(np.round(mantissa * scale) / scale, exponent)
        assert self.total_bits is not None and self.fraction_bits is not None
        quantum = 2.0 ** -self.fraction_bits
        low, high = -(2.0 ** (self.total_bits - 1)) * quantum, (2.0 ** (self.total_bits - 1) - 1) * quantum
        scaled = np.round(x / quantum) * quantum
        self.saturations += int(np.count_nonzero((scaled < low) | (scaled > high)))
        return np.clip(scaled, low, high)


BF16 = "bf16"


def parse_format(text: str, where: str = "format") -> Format:
    """``bf16`` or ``fixed<W,F>`` (also ``fixedW.F``): W total bits (2..63), F fraction bits (0..W-1)."""
    if text == BF16:
        return Format(BF16, significant_bits=8)
    m = re.fullmatch(r"fixed(?:<\s*(\d+)\s*,\s*(\d+)\s*>|(\d+)\.(\d+))", text.strip())
    if m:
        total, fraction = (int(g) for g in (m.group(1, 2) if m.group(1) else m.group(3, 4)))
        if 2 <= total <= 63 and 0 <= fraction < total:
            # named W.F: loom's format language reads fixed<I, F> as I integer bits (fixed<32,16> is 48 bits there)
            return Format(f"fixed{total}.{fraction}", total_bits=total, fraction_bits=fraction)
    raise LoomError(f"unknown number format {text!r}; expected bf16 or fixed<W,F> (W total bits 2..63, "
                    "F fraction bits below W)", where=where)


class _RoundedEval(_Eval):
    def __init__(self, fmt: Format, *args):
        super().__init__(*args)
        self.fmt = fmt

    def __call__(self, e: F.SExpr):
        value = super().__call__(e)
        if e.dtype in F.FLOATS and not isinstance(e, F.Read):  # reads are of already rounded arrays
            return self.fmt.quantize(value)
        return value


def evaluate_in(kernel: F.Kernel, arrays: dict[str, np.ndarray], fmt: Format) -> dict[str, np.ndarray]:
    """The kernel's outputs (as float64 arrays holding ``fmt`` values) from ``arrays`` (inputs by name)."""
    check_congruence(kernel, arrays)
    inputs = {name: fmt.quantize(a) if np.issubdtype(a.dtype, np.floating) else a for name, a in arrays.items()}
    env: dict[int, np.ndarray] = {id(p): np.array(inputs[p.name]) for p in kernel.params if p.is_inout}
    results: dict[str, np.ndarray] = {}
    consts = {id(c): fmt.quantize(c.value) for c in kernel.consts if c.dtype in F.FLOATS}
    for let in kernel.lets:
        indices = let.bound + let.reductions
        sizes = [extent_value(i.extent, arrays) for i in indices]
        ev = _RoundedEval(fmt, inputs, env, index_grid(indices, sizes))
        ev.tensor = _with_consts(ev.tensor, consts)  # type: ignore[method-assign]
        value = np.broadcast_to(ev(let.body), sizes)
        bound = sizes[: len(let.bound)]
        if let.reductions:
            steps = np.asarray(value).reshape(*bound, math.prod(sizes[len(let.bound):]))  # -1 fails on 0 rows
            combine = _BIN[let.op]
            if steps.shape[-1] == 0:  # the identity, as the compiled kernel's accumulator starts (in the format)
                dtype = F.NP_DTYPES[let.target.dtype]
                acc = np.full(steps.shape[:-1], reduction_identity(let.op, dtype), dtype)
                if let.target.dtype in F.FLOATS:
                    acc = fmt.quantize(acc)
            else:
                acc = steps[..., 0]
            for r in range(1, steps.shape[-1]):
                acc = combine(acc, steps[..., r])
                if let.target.dtype in F.FLOATS:
                    acc = fmt.quantize(acc)
            value = acc
        value = np.ascontiguousarray(np.asarray(value)).reshape(bound)
        if let.target.dtype not in F.FLOATS:
            value = value.astype(F.NP_DTYPES[let.target.dtype])
        env[id(let.target)] = value
        if let.target.is_output:
            results[let.target.name] = value
    return results


def _with_consts(lookup, consts: dict[int, np.ndarray]):
    def tensor(t: F.Tensor) -> np.ndarray:
        return consts[id(t)] if id(t) in consts else lookup(t)
    return tensor
