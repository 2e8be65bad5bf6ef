"""Multi-rate streaming: down-sampling (max-pool, pyramid) and up-sampling (``x / 2``) stages, each on its
own affine time grid.

Checked: the schedule (strides, offsets, latency) against the thesis (Table 5.1, gaussian pyramid spatial:
115 words, 4096 cycles) and hand derivations; capacities against a brute-force liveness count straight
from the schedule formulas (not loom's code); the simulated accelerator bit for bit against real Halide
and a numpy reference; every capacity is tight (one less evicts a value).
"""

import os

import islpy as isl
import numpy as np
import pytest

from loom.errors import LoomError
from loom.jit.pipeline import run_cpu
from loom.examples.pipelines import load_app
from loom.frontends.pipeline import Func, ImageParam, UInt8, Var, u16
from loom.frontends.pipeline.expr import Var as EVar
from loom.streaming import build_design, simulate
from loom.frontends.pipeline.index_forms import Affine, FloorDiv, NotAffine, to_affine
from loom.streaming.to_ubuf import design_to_ir
from loom.dialects.ubuf import parse_ir

if "libasan" in os.environ.get("LD_PRELOAD", ""):
    hl = None  # Halide cannot run under a preloaded ASan runtime (see tests/pipelines_cpu/test_cpu_halide.py)
elif os.environ.get("CI"):
    import halide as hl
else:
    try:
        import halide as hl
    except ImportError:
        hl = None

hx, hy = (hl.Var("x"), hl.Var("y")) if hl else (None, None)


def design(name, size):
    out, _ = load_app(name).build("accel", tile=size)
    return out, build_design(out, size)


# numpy references, written from the apps' docstrings ------------------------------------------------

def np_down(a):
    a = a.astype(np.uint16)
    return (a[0::2, 0::2] + a[0::2, 1::2] + a[1::2, 0::2] + a[1::2, 1::2]) // 4


def np_pyramid(img):
    return np_down(np_down(np_down(img))).astype(np.uint8)


def np_max_pool(img):
    return np.maximum(np.maximum(img[0::2, 0::2], img[0::2, 1::2]), np.maximum(img[1::2, 0::2], img[1::2, 1::2]))


def np_upsample(img, w, h):
    a = img.astype(np.uint16)
    x, y = np.arange(w), np.arange(h)[:, None]
    s = a[y // 2, x // 2] + a[y // 2, (x + 1) // 2] + a[(y + 1) // 2, x // 2] + a[(y + 1) // 2, (x + 1) // 2]
    return (s // 4).astype(np.uint8)


# Halide, written in Halide's own API ----------------------------------------------------------------

def halide_pyramid(inp):
    level = hl.Func("hw")
    level[hx, hy] = hl.u16(inp[hx, hy])
    for k in range(3):
        nxt = hl.Func(f"l{k}")
        nxt[hx, hy] = (level[2 * hx, 2 * hy] + level[2 * hx + 1, 2 * hy] + level[2 * hx, 2 * hy + 1]
                       + level[2 * hx + 1, 2 * hy + 1]) / 4
        level = nxt
    out = hl.Func("out")
    out[hx, hy] = hl.u8(level[hx, hy])
    return out


def halide_max_pool(inp):
    out = hl.Func("out")
    out[hx, hy] = hl.max(hl.max(inp[2 * hx, 2 * hy], inp[2 * hx + 1, 2 * hy]),
                         hl.max(inp[2 * hx, 2 * hy + 1], inp[2 * hx + 1, 2 * hy + 1]))
    return out


def halide_upsample(inp):
    hw = hl.Func("hw")
    hw[hx, hy] = hl.u16(inp[hx, hy])
    out = hl.Func("out")
    out[hx, hy] = hl.u8((hw[hx / 2, hy / 2] + hw[(hx + 1) / 2, hy / 2] + hw[hx / 2, (hy + 1) / 2]
                         + hw[(hx + 1) / 2, (hy + 1) / 2]) / 4)
    return out


APPS = {"gaussian_pyramid": ((8, 8), halide_pyramid, lambda img, w, h: np_pyramid(img)),
        "max_pool": ((32, 32), halide_max_pool, lambda img, w, h: np_max_pool(img)),
        "upsample": ((64, 64), halide_upsample, np_upsample)}


@pytest.mark.sanitize
@pytest.mark.parametrize("name", list(APPS))
def test_multirate_apps_simulate_bit_exact_against_halide_numpy_and_cpu(name):
    size, halide_app, reference = APPS[name]
    out, d = design(name, size)
    app = load_app(name)
    cpu, _ = app.build("cpu")
    for seed in range(2):
        img = app.make_inputs(size, np.random.default_rng(seed))["input"]
        sim = simulate(out, {"input": img}, size, design=d)
        np.testing.assert_array_equal(sim, reference(img, *size))
        np.testing.assert_array_equal(sim, run_cpu(cpu, {"input": img}, size))
        if hl is not None:
            want = np.asarray(halide_app(hl.Buffer(img)).realize(list(size)))
            assert want.dtype == sim.dtype
            np.testing.assert_array_equal(sim, want)
        assert len(np.unique(sim)) > 1


@pytest.mark.parametrize("name", list(APPS))
def test_every_multirate_capacity_is_tight(name):
    size, _, _ = APPS[name]
    out, d = design(name, size)
    img = load_app(name).make_inputs(size, np.random.default_rng(3))["input"]
    for buf, cap in d.capacities.items():
        if cap:
            with pytest.raises(LoomError, match="read after eviction"):
                simulate(out, {"input": img}, size, design=d, capacities={buf: cap - 1})


def test_gaussian_pyramid_matches_thesis_table_5_1_spatial():
    """64x64 input, three 2x2 levels: 115 words of memory and 4096 cycles (thesis Table 5.1, spatial)."""
    _, d = design("gaussian_pyramid", (8, 8))
    strides = {n: p.schedule.strides for n, p in d.stages.items()}
    # level k fires every 2^k cycles along x and every 2^k input rows (64 cycles each) along y
    assert strides == {"input": (1, 64), "hw_input": (1, 64), "blur0": (2, 128), "blur1": (4, 256),
                       "output": (8, 512)}
    # level k's first point needs (1, 1) of the level before: one row and one column later,
    # at that level's strides: 65 = 64 + 1, 195 = 65 + 128 + 2, 455 = 195 + 256 + 4
    assert d.offsets == {"input": 0, "hw_input": 0, "blur0": 65, "blur1": 195, "output": 455}
    assert d.latency == 4096  # the last output 455 + 512 * 7 + 8 * 7 = 4095 is read with the last input
    assert d.capacities == {"input": 0, "hw_input": 65, "blur0": 33, "blur1": 17, "output": 0}
    assert sum(d.capacities.values()) == 115
    assert d.capacities["hw_input"] == brute_force(64, 1, 64, 0)
    assert d.capacities["blur0"] == brute_force(32, 2, 128, 65)
    assert d.capacities["blur1"] == brute_force(16, 4, 256, 195)


def brute_force(n, s, row, offset):
    """Live values of an n x n level written at offset + row*y + s*x and read by the 2x2 down-sampling
    stage at strides 2s, 2row starting at offset + row + s (one row and one column later)."""
    written = {(x, y): offset + row * y + s * x for y in range(n) for x in range(n)}
    last = dict(written)
    for y in range(n // 2):
        for x in range(n // 2):
            t = offset + row + s + 2 * row * y + 2 * s * x
            for dx in (0, 1):
                for dy in (0, 1):
                    last[(2 * x + dx, 2 * y + dy)] = max(last[(2 * x + dx, 2 * y + dy)], t)
    return live_max(written, last)


def halide_box3(f):
    """Halide: the sum of f over the 3x3 window at (x, y)."""
    s = f[hx, hy]
    for j in range(3):
        for i in range(3):
            if (i, j) != (0, 0):
                s = s + f[hx + i, hy + j]
    return s


def assert_every_path_gives(want, out, design, img, size, halide=None):
    """The value simulation, the CPU path and (when installed) Halide's ``halide(Buffer)`` all give ``want``."""
    assert len(np.unique(want)) > 1
    np.testing.assert_array_equal(simulate(out, {"input": img}, size, design=design), want)
    np.testing.assert_array_equal(run_cpu(out, {"input": img}, size), want)
    if hl is not None and halide is not None:
        np.testing.assert_array_equal(np.asarray(halide(hl.Buffer(img)).realize(list(size))), want)


def live_max(written: dict, last: dict) -> int:
    """Most values held at once: written at ``written[v]``, held until ``last[v]`` (a value read in its write
    cycle is never held; a read frees its slot before a write in the same cycle)."""
    events = sorted([(t, 1) for v, t in written.items() if last[v] > t] +
                    [(last[v], -1) for v, t in written.items() if last[v] > t])
    live = best = 0
    for _, e in events:
        live += e
        best = max(best, live)
    return best


def test_max_pool_input_buffer_holds_one_row_not_a_tile():
    """2x2 max-pool of a 64x64 tile: a value of an even row waits for the odd row below (64 cycles) plus
    the pooling stage's own column: 65 values, not the 2,080 of a common one-pixel-per-cycle grid."""
    _, d = design("max_pool", (32, 32))
    assert d.stages["output"].schedule.strides == (2, 128)
    assert d.offsets["output"] == 65
    assert d.capacities["hw_input"] == 65 == brute_force(64, 1, 64, 0)
    assert d.latency == 4096


def test_upsample_reads_quasi_affine_and_input_runs_at_half_rate():
    """64x64 output from a 33x33 input: output at one pixel per cycle (strides 1, 64), input every other
    cycle of every other output row (2, 128). Output row y reads input rows y/2 and (y+1)/2, so input row
    b (written at 128b + 2a) is last read by output row 2b + 1 at 64(2b + 1) + 2a + 1 = 128b + 65 + 2a:
    the 33 values of a row are all live when its last one is written at 128b + 64, plus the value (0, b)
    itself until 128b + 65: 34 values."""
    _, d = design("upsample", (64, 64))
    assert d.stages["hw_input"].schedule.strides == (2, 128) and d.stages["output"].schedule.strides == (1, 64)
    assert d.offsets["output"] == 65
    assert d.capacities["hw_input"] == 34
    ports = d.buffers["hw_input"].read_ports
    assert {p.access_text("hw_input") for p in ports} == {
        "hw_input(floor((x)/2), floor((y)/2))", "hw_input(floor((1 + x)/2), floor((y)/2))",
        "hw_input(floor((x)/2), floor((1 + y)/2))", "hw_input(floor((1 + x)/2), floor((1 + y)/2))"}
    # the printed IR carries the quasi-affine maps and parses back (isl reads floor())
    module = parse_ir(str(design_to_ir(d)))
    text = str(module)
    assert "floor((1 + x)/2)" in text
    both = next(p for p in ports if p.access_text("hw_input").count("1 +") == 2)
    assert both.access_map.range().is_equal(isl.Set("{ buf[a, b] : 0 <= a <= 32 and 0 <= b <= 32 }"))
    assert both.access_map.is_single_valued()


def test_floor_division_is_quasi_affine():
    x = EVar("x")
    env = {"x": Affine.var("x")}
    assert to_affine(x / 2, env) == FloorDiv(Affine.var("x"), 2)
    assert to_affine((x + 1) / 2 + 3, env) == FloorDiv(Affine({"x": 1}, 7), 2)
    assert to_affine((x * 4) / 2, env) == Affine.var("x", 2)  # exact: stays affine
    assert to_affine(x / 2 + x, env) == FloorDiv(Affine.var("x", 3), 2)  # floor(x / 2) + x = floor(3x / 2)
    assert to_affine(x >> 1, env) == FloorDiv(Affine.var("x"), 2)  # a signed shift floors
    for bad in (x / 2 + x / 3, 5 - x / 2, (x / 2) * 2):  # two divisions, a ceiling, a multiple of a floor
        with pytest.raises(NotAffine):
            to_affine(bad, env)


def test_down_sampling_from_a_producer_too_narrow_slows_the_output():
    """The output 2 pixels a step reads hw_input at 2x (4 pixels a step) from a 2-wide hw_input: it fires every
    other step, as a 1-wide output does over a 1-wide input (tests/streaming/test_streaming_downsample_rates.py:
    a producer s n wide keeps the output at n pixels a step)."""
    x, y, xo, yo, xi, yi = (Var(n) for n in ("x", "y", "xo", "yo", "xi", "yi"))
    inp = ImageParam(UInt8, 2, "input")
    hw = Func("hw_input")
    hw[x, y] = u16(inp[x, y])
    out = Func("output")
    out[x, y] = hw[2 * x, y] + hw[2 * x + 1, y]
    out.tile(x, y, xo, yo, xi, yi, 8, 8).hw_accelerate(xi, xo)
    hw.compute_at(out, xo)
    out.unroll(xi, 2)
    hw.unroll(x, 2)
    d = build_design(out, (8, 8))
    assert d.stages["hw_input"].schedule.strides == (1, 8) and d.stages["output"].schedule.strides == (2, 8)
    img = np.random.default_rng(0).integers(0, 256, (16, 32)).astype(np.uint8)
    a = img.astype(np.uint16)
    np.testing.assert_array_equal(simulate(out, {"input": img}, (16, 16), design=d), a[:, 0::2] + a[:, 1::2])


def test_pyramid_over_several_tiles_matches_numpy():
    out, d = design("gaussian_pyramid", (4, 4))
    img = load_app("gaussian_pyramid").make_inputs((12, 8), np.random.default_rng(5))["input"]
    np.testing.assert_array_equal(simulate(out, {"input": img}, (12, 8), design=d), np_pyramid(img))


def _random_index(rng, depth=0):
    """A random integer index expression over x and y: sums, constant products and floor divisions."""
    x, y = EVar("x"), EVar("y")
    kind = int(rng.integers(6 if depth < 3 else 2))
    if kind == 0:
        return x if rng.integers(2) else y
    if kind == 1:
        return x * 0 + int(rng.integers(-5, 6))
    a = _random_index(rng, depth + 1)
    if kind == 2:
        return a + _random_index(rng, depth + 1)
    if kind == 3:
        return a - _random_index(rng, depth + 1)
    if kind == 4:
        return a * int(rng.integers(-3, 4))
    return a / int(rng.integers(1, 5))


def test_quasi_affine_forms_evaluate_like_the_expressions():
    """300 seeded random index expressions: to_affine either refuses (NotAffine) or gives a form (Affine or
    FloorDiv) equal to the expression's value (Halide's floor division) at every point of a grid."""
    rng = np.random.default_rng(21)
    env = {"x": Affine.var("x"), "y": Affine.var("y")}
    taken = 0
    for _ in range(300):
        e = _random_index(rng)
        try:
            form = to_affine(e, env)
        except NotAffine:
            continue
        taken += 1
        for px in range(-3, 4):
            for py in range(-3, 4):
                want = _eval(e, px, py)
                if isinstance(form, FloorDiv):
                    got = form.num.evaluate({"x": px, "y": py}) // form.div
                else:
                    got = form.evaluate({"x": px, "y": py})
                assert got == want, (e, form, px, py)
    assert taken > 150


def _eval(e, px, py):
    from loom.frontends.pipeline.expr import Cast, Const
    if isinstance(e, EVar):
        return px if e.name == "x" else py
    if isinstance(e, Const):
        return int(e.value)
    if isinstance(e, Cast):
        return _eval(e.value, px, py)
    a, b = _eval(e.a, px, py), _eval(e.b, px, py)
    return {"add": a + b, "sub": a - b, "mul": a * b, "div": a // b if b else 0}[e.op]


@pytest.mark.parametrize("name,size", [("gaussian_pyramid", (8, 40)), ("gaussian_pyramid", (5, 23)),
                                       ("max_pool", (32, 61)), ("max_pool", (7, 50)), ("upsample", (64, 90)),
                                       ("upsample", (30, 71))])
def test_capacities_from_a_few_rows_equal_the_full_sweep(name, size):
    """Build time stays flat in the image height: capacities come from a proxy design clipped to a few output
    rows (stage rows scaled by their rates), and equal the exact sweep over the whole domain."""
    out, _ = load_app(name).build("accel", tile=size)
    fast = build_design(out, size)
    exact = build_design(out, size, exact_capacity=True)
    assert fast.capacities == exact.capacities
    assert fast.latency == exact.latency
