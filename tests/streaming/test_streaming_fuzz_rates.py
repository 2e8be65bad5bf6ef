"""Fuzz the multi-rate streaming scheduler with random small pipelines nobody shipped.

Each example is a DAG of 2-5 stages over one u8 or u16 input: hw_input (a cast) and stages that are a weighted sum,
a max, a min or a sum of shifts of taps from earlier stages, each tap at a random offset (halo 0-2) and read plain
(``x + o``), strided (``s x + o``) or divided (``(x + o) / k``) in x and y alike; random pixels a step
(``unroll(x, n)``), rows a step (``unroll(y, n)``), a tile of at most 16 x 12 and sometimes two identical chained
stages sharing one kernel. Those draws are mostly refused (sharing takes no up-sampling, several scales or two
producers), so a second run draws what sharing schedules (stencil chains at one rate, one pixel a step) and the
test requires a shared design built and checked by pixel, line and block interleaving. Either loom refuses it with a LoomError naming a Func and a construct, or it builds and
the value simulation from its ubuf IR (which checks every read comes after its write, and replays every delay
line and wire of the memory map through its taps) and the CPU path both equal
a numpy evaluation written from the description below (not from loom's code), over 2 x 2 tiles, and every buffer
capacity is tight (one less evicts a value). Two pipelines it found made gcc 12.2's value-range propagation drop
every output store of the CPU path's C (the regression tests at the end; loom compiles with -fno-tree-vrp on gcc).

Bounded for CI by a fixed seed (hypothesis derandomized); ``LOOM_FUZZ_SCALE=N`` (as tests/fuzz) runs N times as
many examples and prints how many were built and refused, by message (``pytest -s``).
"""

from __future__ import annotations

import collections
import re
from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loom.errors import LoomError
from loom.frontends.pipeline import Func, ImageParam, UInt8, UInt16, Var, maximum, minimum, u8, u16
from loom.frontends.pipeline.recipes import TileLoops, share_kernels
from loom.jit.pipeline import run_cpu
from loom.streaming import build_design, simulate
from loom.streaming.simulate_mapped import simulate_mapped

from tests.fuzz.accel_mutator import FUZZ_SCALE

# the description ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Access:
    """One dimension of a tap: ``(scale * v + offset) / div`` (floor division, Halide's)."""
    scale: int
    offset: int
    div: int

    def expr(self, v):
        e = v if self.scale == 1 else self.scale * v
        if self.offset:
            e = e + self.offset
        return e if self.div == 1 else e / self.div

    def np(self, v):
        return (self.scale * v + self.offset) // self.div

    def __str__(self):
        e = ("{v}" if self.scale == 1 else f"{self.scale}*{{v}}") + (f"+{self.offset}" if self.offset else "")
        return f"({e})/{self.div}" if self.div > 1 else e


@dataclass(frozen=True)
class Tap:
    src: int  # stage index (0: hw_input)
    ax: Access
    ay: Access
    weight: int  # sum: a factor; shift: a right shift


@dataclass(frozen=True)
class Stage:
    op: str  # "sum", "max", "min", "shift"
    taps: tuple
    div: int  # sum and shift: the total is divided by it
    lanes: int  # unroll(x, lanes)
    rows: int  # unroll(y, rows)


@dataclass(frozen=True)
class Pipeline:
    in_u16: bool
    tile: tuple
    stages: tuple  # stages[0] is hw_input (its taps unused); the last is the output
    share: str | None  # "pixel" / "line" / "block": stages[-3] and stages[-2] share one kernel

    def __str__(self):
        lines = [f"input {'u16' if self.in_u16 else 'u8'}, tile {self.tile}, share {self.share}",
                 f"s0 = u16(input(x, y)) lanes {self.stages[0].lanes} rows {self.stages[0].rows}"]
        for i, s in enumerate(self.stages[1:], 1):
            taps = ", ".join(f"s{t.src}({str(t.ax).format(v='x')}, {str(t.ay).format(v='y')})" +
                             {"sum": f"*{t.weight}", "shift": f">>{t.weight}"}.get(s.op, "") for t in s.taps)
            lines.append(f"s{i} = {s.op}({taps}) / {s.div} lanes {s.lanes} rows {s.rows}")
        return "\n".join(lines)


ACCESS = st.builds(Access, scale=st.sampled_from([1, 1, 1, 2, 3]), offset=st.integers(0, 2),
                   div=st.sampled_from([1, 1, 1, 2, 3]))
STENCIL = st.builds(Access, scale=st.just(1), offset=st.integers(0, 2), div=st.just(1))  # a window at one rate
LANES, ROWS = st.sampled_from([1, 1, 2, 3, 4]), st.sampled_from([1, 1, 2])


@st.composite
def stage(draw, sources, lanes, rows, access=ACCESS):
    """A stage reading the stages ``sources`` (its first tap reads the first, so every stage is read)."""
    op = draw(st.sampled_from(["sum", "sum", "max", "min", "shift"]))
    n = draw(st.integers(1, 4))
    taps = tuple(Tap(sources[0] if i == 0 else draw(st.sampled_from(sources)), draw(access), draw(access),
                     draw(st.integers(1, 3) if op == "sum" else st.integers(0, 3))) for i in range(n))
    div = draw(st.sampled_from([1, 2, 3, 4, 9])) if op in ("sum", "shift") else 1
    return Stage(op, taps, div, draw(lanes), draw(rows))


@st.composite
def pipeline(draw):
    n = draw(st.integers(2, 5))
    share = draw(st.sampled_from([None] * 6 + ["pixel", "line", "block"])) if n >= 4 else None
    # three in four pipelines run every stage at one block (most mixed blocks are refused as different rates)
    lanes, rows = (st.just(draw(LANES)), st.just(draw(ROWS))) if draw(st.integers(0, 3)) else (LANES, ROWS)
    if share and draw(st.integers(0, 3)):  # sharing refuses pixels and rows a step: mostly one pixel a step
        lanes = rows = st.just(1)
    stages = [Stage("cast", (), 1, draw(lanes), draw(rows))]
    for i in range(1, n):
        if share and i == n - 2:  # the same kernel as stage i - 1, over it: taps all read the stage before
            a = stages[i - 1]
            stages.append(Stage(a.op, tuple(Tap(i - 1, t.ax, t.ay, t.weight) for t in a.taps), a.div,
                                draw(lanes), draw(rows)))
        elif share and i == n - 3:  # the first of the shared pair reads one stage only, mostly at one scale (sharing
            # refuses up-sampling and several scales)
            one_scale = st.builds(Access, scale=st.just(draw(st.sampled_from([1, 1, 2]))), offset=st.integers(0, 2),
                                  div=st.just(1))
            stages.append(draw(stage([i - 1], lanes, rows, one_scale if draw(st.integers(0, 3)) else ACCESS)))
        else:
            stages.append(draw(stage([i - 1] + list(range(i - 1)), lanes, rows)))
    tile = (draw(st.integers(2, 16)), draw(st.integers(2, 12)))
    return Pipeline(draw(st.booleans()), tile, tuple(stages), share)


@st.composite
def stencil_chain(draw):
    """A shared pipeline whose every stage reads only the one before, through windows at one rate, one pixel a
    step: the designs compute sharing builds (``pipeline`` draws mostly what it refuses: up-sampling, reads at
    several scales, stages reading two producers)."""
    n, share, one = draw(st.integers(4, 5)), draw(st.sampled_from(["pixel", "line", "block"])), st.just(1)
    stages = [Stage("cast", (), 1, 1, 1)]
    for i in range(1, n):
        if i == n - 2:  # the same kernel as stage i - 1, over it
            a = stages[i - 1]
            stages.append(Stage(a.op, tuple(Tap(i - 1, t.ax, t.ay, t.weight) for t in a.taps), a.div, 1, 1))
        else:
            stages.append(draw(stage([i - 1], one, one, STENCIL)))
    tile = (draw(st.integers(2, 16)), draw(st.integers(2, 12)))
    return Pipeline(draw(st.booleans()), tile, tuple(stages), share)


# loom's form ------------------------------------------------------------------------------------------------------


def kernel(s: Stage, funcs, x, y):
    vals = [funcs[t.src][t.ax.expr(x), t.ay.expr(y)] for t in s.taps]
    if s.op in ("max", "min"):
        total = vals[0]
        for v in vals[1:]:
            total = (maximum if s.op == "max" else minimum)(total, v)
        return total
    terms = [v * t.weight if s.op == "sum" else v >> t.weight for v, t in zip(vals, s.taps)]
    total = terms[0]
    for v in terms[1:]:
        total = total + v
    return total / s.div if s.div > 1 else total


def loom_pipeline(p: Pipeline) -> Func:
    x, y = Var("x"), Var("y")
    xo, yo, xi, yi = (Var(v) for v in "xo yo xi yi".split())
    inp = ImageParam(UInt16 if p.in_u16 else UInt8, 2, "input")
    funcs = [Func("hw_input")] + [Func(f"s{i}") for i in range(1, len(p.stages) - 1)] + [Func("output")]
    funcs[0][x, y] = u16(inp[x, y])
    for i, s in enumerate(p.stages[1:], 1):
        e = kernel(s, funcs, x, y)
        funcs[i][x, y] = u8(e) if i == len(p.stages) - 1 else e
    out = funcs[-1]
    out.tile(x, y, xo, yo, xi, yi, *p.tile).hw_accelerate(xi, xo)
    for f, s in zip(funcs, p.stages):
        if f is out:
            if s.lanes > 1:
                out.unroll(xi, s.lanes)
            if s.rows > 1:
                out.unroll(yi, s.rows)
        else:
            f.compute_at(out, xo)
            if s.lanes > 1:
                f.unroll(x, s.lanes)
            if s.rows > 1:
                f.unroll(y, s.rows)
    if p.share:
        share_kernels(funcs[-3:-1], p.share, TileLoops(xo, yo, xi, yi))
    return out


# the numpy evaluation, from the description ----------------------------------------------------------------------


def extents(p: Pipeline, size):
    """Per stage, the (width, height) from 0 that the output over ``size`` needs (every index is >= 0)."""
    ext = [(0, 0)] * len(p.stages)
    ext[-1] = size
    for i in range(len(p.stages) - 1, 0, -1):
        w, h = ext[i]
        for t in p.stages[i].taps:
            ext[t.src] = (max(ext[t.src][0], t.ax.np(w - 1) + 1), max(ext[t.src][1], t.ay.np(h - 1) + 1))
    return ext


def np_pipeline(p: Pipeline, img, size):
    ext = extents(p, size)
    vals = [img[:ext[0][1], :ext[0][0]].astype(np.uint16)]
    for i, s in enumerate(p.stages[1:], 1):
        w, h = ext[i]
        xs, ys = np.arange(w)[None, :], np.arange(h)[:, None]
        taps = [vals[t.src][t.ay.np(ys), t.ax.np(xs)] for t in s.taps]
        if s.op == "max":
            v = np.maximum.reduce(taps)
        elif s.op == "min":
            v = np.minimum.reduce(taps)
        else:
            v = np.zeros((h, w), np.uint16)
            for a, t in zip(taps, s.taps):
                v += a * np.uint16(t.weight) if s.op == "sum" else a >> np.uint16(t.weight)
            v //= np.uint16(s.div)
        vals.append(v)
    return vals[-1].astype(np.uint8)


# the check ------------------------------------------------------------------------------------------------------


REFUSED = collections.Counter()
RUNS = collections.Counter()


def refusal_key(e: LoomError) -> str:
    """The message with its numbers and names blanked, to count refusals by kind."""
    return re.sub(r"'[A-Za-z_0-9]+'", "'F'", re.sub(r"-?\d+", "N", e.message))[:110] + f" [{e.construct}]"


def check(p: Pipeline, seed: int = 0, tight: bool = True):
    try:
        out = loom_pipeline(p)
        d = build_design(out, p.tile)
    except LoomError as e:
        # a refusal names the Func and the construct it refuses
        assert re.fullmatch(r"Func '\w+'", e.where or ""), (str(e), e.where)
        assert e.construct, str(e)
        REFUSED[refusal_key(e)] += 1
        RUNS["refused"] += 1
        if all(s.lanes == s.rows == 1 for s in p.stages):  # no rates to reconcile: suspect an over-broad rule
            RUNS["refused at one pixel a step"] += 1
            REFUSED["(one pixel a step) " + refusal_key(e)] += 1
        return None
    RUNS["built"] += 1
    taps = [t for s in p.stages for t in s.taps]
    for what, has in (("shared", p.share), ("lanes>1", any(s.lanes > 1 for s in p.stages)),
                      ("rows>1", any(s.rows > 1 for s in p.stages)),
                      ("strided", any(a.scale > 1 for t in taps for a in (t.ax, t.ay))),
                      ("divided", any(a.div > 1 for t in taps for a in (t.ax, t.ay)))):
        RUNS["built " + what] += bool(has)
    size = (2 * p.tile[0], 2 * p.tile[1])
    w, h = extents(p, size)[0]
    rng = np.random.default_rng(seed)
    img = rng.integers(0, 1 << (16 if p.in_u16 else 8), (h, w)).astype(np.uint16 if p.in_u16 else np.uint8)
    want = np_pipeline(p, img, size)
    # the value simulation, with every delay line and wire of the memory map replayed through its taps
    np.testing.assert_array_equal(simulate_mapped(out, {"input": img}, size, design=d), want)
    np.testing.assert_array_equal(run_cpu(out, {"input": img}, size), want)
    if p.share:  # built and simulated bit-exactly
        RUNS[f"checked shared by {p.share}"] += 1
    if tight:
        for buf, cap in d.capacities.items():
            if cap:
                with pytest.raises(LoomError, match="read after eviction"):
                    simulate(out, {"input": img}, size, design=d, capacities={buf: cap - 1})
    return d


@settings(max_examples=32 * FUZZ_SCALE, derandomize=True, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(p=pipeline())
def fuzz(p):
    check(p)


@settings(max_examples=8 * FUZZ_SCALE, derandomize=True, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(p=stencil_chain())
def fuzz_shared(p):
    check(p)


def test_random_multirate_pipelines_build_exactly_or_are_refused_by_name(capsys):
    RUNS.clear()
    REFUSED.clear()
    fuzz()
    fuzz_shared()
    # the run reached every kind of read and schedule it draws (a generator that only made refusals passes nothing)
    for what in ("built", "refused", "built lanes>1", "built rows>1", "built strided", "built divided",
                 "checked shared by pixel", "checked shared by line", "checked shared by block"):
        assert RUNS[what] > 0, (what, dict(RUNS))
    if FUZZ_SCALE > 1:  # the long run: how many were refused, by message (pytest -s)
        with capsys.disabled():
            print(f"\n{dict(RUNS)}")
            for k, v in REFUSED.most_common():
                print(f"{v:5d}  {k}")


# what the fuzzer found, minimised (each failed before its fix) ----------------------------------------------------


def A(scale=1, offset=0, div=1):
    return Access(scale, offset, div)


def chain(tile, *stages, in_u16=False):
    return Pipeline(in_u16, tile, (Stage("cast", (), 1, 1, 1),) + stages, None)


def test_a_tile_reading_through_y_over_2_at_another_phase_gets_its_own_configuration():
    """output = hw(x, y / 2) on 3-row tiles: the second tile starts at row 3, where floor(y / 2) of its local rows
    0, 1, 2 are rows 1, 2, 2 of hw_input's, not the first tile's 0, 0, 1 shifted. One design for both gave wrong
    values on that tile (simulate now schedules each phase, as it does each smaller GuardWithIf tile)."""
    check(chain((2, 3), Stage("max", (Tap(0, A(), A(div=2), 0),), 1, 1, 1)))


def test_a_tile_whose_domain_changes_with_its_phase_is_simulated():
    """output = max(hw(x, y), hw(x, y / 2)) on 2-row tiles: hw_input's rows are 0..1 for the first tile, 1..3 for the
    second (a domain of another shape; simulate refused it with "needs a domain of a different shape")."""
    check(chain((2, 2), Stage("max", (Tap(0, A(), A(), 0), Tap(0, A(), A(div=2), 0)), 1, 1, 1)))


def test_a_read_through_2y_over_3_reads_back_from_the_ubuf_ir():
    """output = hw(x, floor(2y / 3)): isl prints the access as y + floor(-y / 3), which the IR reader refused
    ("not of the form floor((a.p + c)/d)"); it now folds the integer part into the floor."""
    check(chain((2, 2), Stage("max", (Tap(0, A(), A(scale=2, div=3), 0),), 1, 1, 1)))


@pytest.mark.parametrize("via", [0, 2])
def test_rows_read_at_two_rates_by_one_stage_keep_enough_capacity(via):
    """output = s(x, y) + s(x, 2y) over 12 rows: the output runs at the 2y rate, so row y of s waits ever longer
    (the live values grow with y). The few-rows proxy took it for a repeating pattern and gave 10 instead of
    the sweep's 12 (a read after eviction); such a read now takes the full sweep."""
    copy = [Stage("sum", (Tap(i, A(), A(), 1),), 1, 1, 1) for i in range(via)]
    last = Stage("sum", (Tap(via, A(), A(), 1), Tap(via, A(), A(scale=2), 1)), 1, 1, 1)
    p = chain((2, 12), *copy, last)
    d = check(p)
    assert d.capacities == build_design(loom_pipeline(p), p.tile, exact_capacity=True).capacities


def cpu_against_numpy(p, size):
    out = loom_pipeline(p)
    w, h = extents(p, size)[0]
    img = np.random.default_rng(0).integers(0, 256, (h, w)).astype(np.uint8)
    want = np_pipeline(p, img, size)
    np.testing.assert_array_equal(simulate(out, {"input": img}, size), want)
    np.testing.assert_array_equal(run_cpu(out, {"input": img}, size), want)


def test_the_cpu_path_of_a_four_tap_stage_at_three_pixels_a_step():
    """output = (hw(x + 2, y) + hw(x + 2, y / 2) + hw(2x + 2, 3y) + 2 hw(x / 3, y)) / 2, 3 pixels a step, 15 x 4
    tiles over 30 x 8: gcc 12.2 at -O2/-O3 with tree-vrp dropped every output store of its C (all zeros;
    compiler.GCC_WORKAROUND_FLAGS)."""
    taps = (Tap(0, A(offset=2), A(), 1), Tap(0, A(offset=2), A(div=2), 1), Tap(0, A(2, 2), A(3), 1),
            Tap(0, A(div=3), A(), 2))
    p = Pipeline(False, (15, 4), (Stage("cast", (), 1, 3, 1), Stage("sum", taps, 2, 3, 1)), None)
    cpu_against_numpy(p, (30, 8))


def test_the_cpu_path_of_a_max_over_a_3y_over_2_stage():
    """s1 = hw(x / 2, 3y / 2); output = max(s1(x, 2y), s1(x, y + 1), s1(3x + 2, 3y + 2), s1(x, y / 2)), one pixel a
    step, 2 x 9 tiles over 4 x 18 (the fuzzer's shrink): the second case gcc's tree-vrp emptied."""
    T = lambda src, ax, ay: Tap(src, ax, ay, 0)  # noqa: E731
    s1 = Stage("max", (T(0, A(div=2), A(3, 0, 2)),), 1, 1, 1)
    out = Stage("max", (T(1, A(), A(2)), T(1, A(), A(1, 1)), T(1, A(3, 2), A(3, 2)), T(1, A(), A(div=2))), 1, 1, 1)
    cpu_against_numpy(chain((2, 9), s1, out), (4, 18))
