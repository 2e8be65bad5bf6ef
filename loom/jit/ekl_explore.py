"""Scalar-type exploration of an EKL kernel: the same kernel in f64, f32, bf16 and fixed point.

EKL makes scalar types parameters (``type REAL = f64;``). ``explore`` rebinds every
float type alias of the source (a source without one: every ``f64`` and ``f32`` it names) to each type in turn, runs the kernel on the same
random inputs and compares each output with the f64 run: maximum and mean
element-wise relative error (|x - x64| / |x64|, over elements where x64 != 0)
and the time of one call.

f64 and f32 rows are the compiled kernels (C). The bf16 and ``fixed`` (``fixedW.F``:
W total bits) rows are *reference-evaluated*: the elaborated form evaluated with
numpy with every operation rounded to the format (``loom.frontends.ekl.emulate``);
their times are the emulation's, not a compiled kernel's, and the table says so.
Each of ``formats`` (loom's number formats: ``fixed<10, 4>`` = 10 integer and 4
fraction bits, ``float<5, 6>``, ``e4m3fn``, ...) adds a row of the f64 kernel
*compiled* with its arithmetic in that format (``loom.jit.ekl_formats``), bit-exact
with ``loom.core.numformats``.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from loom.core.numformats import parse_format as parse_number_format
from loom.errors import LoomError, LoomWarning
from loom.frontends.ekl import syntax as S
from loom.frontends.ekl.emulate import Format, evaluate_in, parse_format
from loom.frontends.ekl.parser import parse
from loom.frontends.ekl.types import FLOATS
from loom.jit.ekl import _read, load, random_arrays
from loom.jit.ekl_formats import in_format


@dataclass(frozen=True)
class Row:
    type: str
    how: str  # "compiled" | "reference-evaluated" | "compiled (base2)"
    max_rel_error: float
    mean_rel_error: float
    seconds: float  # one call (best of the repeats)
    saturations: int | None = 0  # None: not counted (compiled format rows)

    def cells(self) -> list[object]:
        return [self.type, self.how, self.max_rel_error, self.mean_rel_error, f"{self.seconds * 1e3:.3g}",
                "-" if self.saturations is None else self.saturations]


HEADERS = ["type", "how", "max rel err", "mean rel err", "ms/call", "saturated"]


def float_aliases(text: str, filename: str) -> list[str]:
    """The type aliases of the source bound to a float type (what an instantiation rebinds)."""
    return [item.name for item in parse(text, filename).items
            if isinstance(item, S.TypeDef) and isinstance(item.type, S.NamedType) and item.type.name in FLOATS]


def relative_errors(got: np.ndarray, want: np.ndarray) -> tuple[float, float]:
    got, want = np.asarray(got, np.float64).ravel(), np.asarray(want, np.float64).ravel()
    nonzero = want != 0
    if not nonzero.any():
        return 0.0, 0.0
    rel = np.abs(got[nonzero] - want[nonzero]) / np.abs(want[nonzero])
    return float(rel.max()), float(rel.mean())


def _best(run, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - start)
    return best


def explore(text_or_path, kernel: str | None = None, *, size: int = 8, seed: int = 0,
            fixed: str = "fixed32.16", repeats: int = 5, inputs: dict[str, np.ndarray] | None = None,
            ranges: dict[str, tuple[float, float]] | None = None, formats: Sequence[str] = (),
            overflow: str | None = None) -> list[Row]:
    """One row per type (f64, f32, bf16, ``fixed``); see the module docstring. ``inputs``: the kernel's
    input arrays by name (default: uniform [0, 1) floats, random 0/1 indices, or [lo, hi) for the names in
    ``ranges``; dynamic extents ``size``). ``formats``: compiled rows (``overflow``: their overflow mode, default
    each format's)."""
    if repeats < 1:  # no timed call would run: every row would compare never-written zeros
        raise LoomError(f"repeats must be at least 1, got {repeats}", where="repeats")
    text, filename = _read(text_or_path)
    # without a `type REAL = f64;` alias the float types themselves are the parameter: every f64 and f32
    aliases = float_aliases(text, filename) or list(FLOATS)
    fmt = parse_format(fixed, where="fixed")
    if "<" in fixed:  # the same text is another format in `formats` (loom's fixed<I, F>: I integer bits)
        warnings.warn(LoomWarning(
            f"fixed: {fixed!r} is emulated as {fmt.name} ({fmt.total_bits} bits in all, {fmt.fraction_bits} fraction "
            f"bits), but as a --format, fixed<I, F> has I integer bits ({fmt.total_bits + fmt.fraction_bits} in all); "
            f"write {fmt.name} to mean the emulated one"), stacklevel=2)
    numformats = [(f, parse_number_format(f, where="format")) for f in formats]  # refused before anything runs
    f64 = load(text_or_path, types={a: "f64" for a in aliases}).kernel(kernel)
    if not any(t.dtype in FLOATS for t in [*f64.form.params, *(let.target for let in f64.form.lets)]):
        # (every row would be the same integer kernel, with errors 0)
        raise LoomError(f"kernel {f64.name} computes no floating-point values: there is no scalar type to explore",
                        filename=filename)
    arrays = random_arrays(f64, size, seed, ranges)
    for name, value in (inputs or {}).items():  # a misspelt name would leave its random array in place unnoticed
        if name not in arrays:
            raise LoomError(f"kernel {f64.name} has no parameter {name!r} (parameters: {', '.join(arrays)})",
                            where=f"inputs[{name!r}]")
        arrays[name] = np.asarray(value)  # numbers too (scalar parameters), as the kernel call checks them
    given = f64.inputs(arrays)

    def compiled(dtype: str) -> tuple[dict[str, np.ndarray], float]:
        k = f64 if dtype == "f64" else load(text_or_path, types={a: dtype for a in aliases}).kernel(kernel)
        args = {p.name: (arrays[p.name].astype(np.float32) if p.dtype == "f32" else arrays[p.name]).copy()
                for p in k.form.params}
        k.compile()
        seconds = _best(lambda: k(**args), repeats)
        return {t.name: args[t.name] for t in k.form.outputs}, seconds

    want, seconds = compiled("f64")
    rows = [Row("f64", "compiled", 0.0, 0.0, seconds)]
    got, seconds = compiled("f32")
    rows.append(Row("f32", "compiled", *_worst(got, want), seconds))
    for f in (parse_format("bf16"), fmt):
        emulated = {}

        def run(f: Format = f) -> None:
            f.saturations = 0
            emulated.update(evaluate_in(f64.lowered_form, given | _outputs(f64, arrays), f))
        seconds = _best(run, max(1, repeats // 2))
        rows.append(Row(f.name, "reference-evaluated", *_worst(emulated, want), seconds, f.saturations))
    for spelled, nf in numformats:  # rows named as the user spelled them
        k = in_format(f64, nf, overflow=overflow)
        args = {p.name: arrays[p.name].copy() for p in f64.form.params}
        seconds = _best(lambda: k(**args), repeats)
        outputs = {t.name: args[t.name] for t in f64.form.outputs}
        rows.append(Row(spelled, "compiled (base2)", *_worst(outputs, want), seconds, None))
    return rows


def _outputs(kernel, arrays: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Output arrays (their shapes fix dynamic extents)."""
    return {t.name: arrays[t.name] for t in kernel.form.outputs}


def _worst(got: dict[str, np.ndarray], want: dict[str, np.ndarray]) -> tuple[float, float]:
    """Errors over every output: the largest maximum, the mean over all elements."""
    errors = [relative_errors(got[name], want[name]) for name in want]
    sizes = [max(1, want[name].size) for name in want]
    return max(e[0] for e in errors), float(np.average([e[1] for e in errors], weights=sizes))
