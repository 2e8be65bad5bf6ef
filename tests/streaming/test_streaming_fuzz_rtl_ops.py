"""Fuzz the RTL's kernel ops: random integer expressions (wrapping arithmetic, signed and unsigned division and
modulo, shifts, bit ops, min/max, comparisons and selects, casts between 8-, 16- and 32-bit types, absd) over
two pixels of an image holding each type's edge values, one expression per output channel (the channels
unrolled in space: one lane each, its select on the channel folded away), co-simulated on the Verilated RTL and
compared with the pipeline language's numpy reference (``evaluate``). One Verilator build per seed; CI runs two
seeds, ``LOOM_FUZZ_SCALE=N`` N times as many."""

from __future__ import annotations

import random

import numpy as np
import pytest

from loom.errors import LoomError
from loom.frontends import pipeline as pl
from tests.fuzz.accel_mutator import FUZZ_SCALE
from tests.rtl.rtl_helpers import require_verilator

TYPES = ["u8", "i8", "u16", "i16", "i32", "u32"]
LANES = 8


def _expr(rng: random.Random, depth: int) -> str:
    if depth == 0 or rng.random() < 0.25:
        leaf = rng.choice(["a", "b", "a", "b", str(rng.choice([0, 1, 2, 3, 7, 255, -1, -128, 1000]))])
        return f"{rng.choice(TYPES)}({leaf})" if rng.random() < 0.5 else leaf
    a, b = _expr(rng, depth - 1), _expr(rng, depth - 1)
    kind = rng.randrange(7)
    if kind == 0:
        return f"({a} {rng.choice(['+', '-', '*'])} {b})"
    if kind == 1:
        return f"({a} {rng.choice(['/', '%'])} {b})"
    if kind == 2:
        return f"({a} {rng.choice(['>>', '<<'])} {rng.choice([0, 1, 3, 7, 15])})"
    if kind == 3:
        return f"({a} {rng.choice(['&', '|', '^'])} {b})"
    if kind == 4:
        return f"pl.{rng.choice(['min', 'max', 'absd'])}({a}, {b})"
    if kind == 5:
        c, d = _expr(rng, depth - 1), _expr(rng, depth - 1)
        return f"pl.select({c} {rng.choice(['<', '<=', '==', '!=', '>'])} {d}, {a}, {b})"
    return f"{rng.choice(TYPES)}({a})"


def _pipeline(rng: random.Random, in_type: str):
    x, y, c = pl.Var("x"), pl.Var("y"), pl.Var("c")
    ptype = {"u8": pl.UInt8, "i8": pl.Int8, "u16": pl.UInt16, "i16": pl.Int16, "i32": pl.Int32, "u32": pl.UInt32}
    inp = pl.ImageParam(ptype[in_type], 2, "input")
    hw, out = pl.Func("hw"), pl.Func("out")
    hw[x, y] = inp[x, y]
    namespace = {"pl": pl, "a": hw[x, y], "b": hw[x + 1, y], **{t: getattr(pl, t) for t in TYPES}}
    sources, exprs = [], []
    while len(exprs) < LANES:
        src = _expr(rng, 3)
        try:
            v = eval(src, namespace)
            if isinstance(v, int):  # Python arithmetic on literals alone (7 << 30 is an i64 constant): draw again
                continue
            e = pl.i32(v)
            pl.Func("check")[x, y] = e  # a mix of types the language refuses (its LoomError): draw again
        except (TypeError, ArithmeticError, LoomError):  # Python arithmetic on literals (1 / 0) too
            continue
        sources.append(src)
        exprs.append(e)
    value = exprs[-1]
    for k in reversed(range(LANES - 1)):
        value = pl.select(c == k, exprs[k], value)
    out[x, y, c] = value
    out.iteration_order([pl.IterLevel("CGRA", [(x, 4), (y, 2)]), pl.IterLevel("host")]).accelerate("CGRA")
    hw.compute_at(out.get_looplevel("CGRA", x))
    out.unroll(c)
    return out, sources


def _image(rng: random.Random, in_type: str) -> np.ndarray:
    dt = np.dtype({"u8": np.uint8, "i8": np.int8, "u16": np.uint16, "i16": np.int16, "i32": np.int32,
                   "u32": np.uint32}[in_type])
    info = np.iinfo(dt)
    edges = [info.min, info.max, 0, 1, -1 if info.min < 0 else 2, info.min + 1, info.max - 1, 3]
    values = edges + [rng.randint(int(info.min), int(info.max)) for _ in range(4 * 9 - len(edges))]
    rng.shuffle(values)
    return np.array(values, dtype=np.int64).astype(dt).reshape(4, 9)


@pytest.mark.parametrize("seed", range(2 * FUZZ_SCALE))
def test_random_integer_kernels_on_the_rtl_match_the_reference(seed):
    require_verilator()
    from loom.jit.streaming_rtl import simulate_rtl
    rng = random.Random(seed)
    in_type = TYPES[seed % len(TYPES)]
    out, sources = _pipeline(rng, in_type)
    img = _image(rng, in_type)
    want = pl.evaluate(out, {"input": img}, (8, 4, LANES))
    got = simulate_rtl(out, {"input": img}, (8, 4, LANES))
    for k, src in enumerate(sources):
        np.testing.assert_array_equal(got[k], want[k], err_msg=f"seed {seed}, {in_type} input, lane {k}: {src}")
