"""``TailStrategy`` of ``split``/``tile``/``unroll`` on the CPU path, bit-exact against Halide on sizes the
factors do not divide: the same values where Halide computes, an error where Halide refuses (RoundUp reading
past a too-small input, ShiftInwards on an update definition)."""

import numpy as np
import pytest
from tests.pipelines_cpu.halide_oracle import hl

import loom.frontends.pipeline as lp
from loom.errors import LoomError
from loom.jit.pipeline import run_cpu

T = lp.TailStrategy
W, H = 10, 7  # output size; tiles of 4 x 3 leave tails in both dimensions
STRATEGIES = [T.Auto, T.RoundUp, T.GuardWithIf, T.ShiftInwards, T.PredicateLoads, T.PredicateStores]


def _hl_tail(name):
    return getattr(hl.TailStrategy, name)


def loom_blur(strategy, intermediate_strategy=None):
    inp = lp.ImageParam(lp.UInt8, 2, "inp")
    x, y, xo, yo, xi, yi = (lp.Var(n) for n in ("x", "y", "xo", "yo", "xi", "yi"))
    blur_x = lp.Func("blur_x")
    blur_x[x, y] = lp.u16(inp[x, y]) + lp.u16(inp[x + 1, y]) * 2 + lp.u16(inp[x + 2, y])
    out = lp.Func("out")
    out[x, y] = lp.u8((blur_x[x, y] + blur_x[x, y + 1] * 2 + blur_x[x, y + 2]) >> 4)
    out.tile(x, y, xo, yo, xi, yi, 4, 3, strategy)
    blur_x.compute_root()
    if intermediate_strategy is not None:
        blur_x.split(x, xo, xi, 3, intermediate_strategy)
    return out


def halide_blur(strategy, intermediate_strategy=None):
    inp = hl.ImageParam(hl.UInt(8), 2, "inp")
    x, y, xo, yo, xi, yi = (hl.Var(n) for n in ("x", "y", "xo", "yo", "xi", "yi"))
    blur_x = hl.Func("blur_x")
    blur_x[x, y] = hl.u16(inp[x, y]) + hl.u16(inp[x + 1, y]) * 2 + hl.u16(inp[x + 2, y])
    out = hl.Func("out")
    out[x, y] = hl.u8((blur_x[x, y] + blur_x[x, y + 1] * 2 + blur_x[x, y + 2]) >> 4)
    out.tile(x, y, xo, yo, xi, yi, 4, 3, _hl_tail(strategy))
    blur_x.compute_root()
    if intermediate_strategy is not None:
        blur_x.split(x, xo, xi, 3, _hl_tail(intermediate_strategy))
    return inp, out


def halide_realize(inp, out, image, size):
    inp.set(hl.Buffer(image))
    return np.asarray(out.realize(list(size)))


CASES = [(s, 0) for s in STRATEGIES] + [(s, 4) for s in T.ROUNDING]  # margin: input enough to round up


@pytest.mark.parametrize("strategy,margin", CASES)
def test_tiled_output_and_root_intermediate_match_halide(strategy, margin):
    image = np.random.default_rng(1).integers(0, 256, size=(H + 2 + margin, W + 2 + margin), dtype=np.uint8)
    inp, hout = halide_blur(strategy, strategy)
    try:
        want = halide_realize(inp, hout, image, (W, H))
    except hl.HalideError:
        want = None
    out = loom_blur(strategy, strategy)
    if want is None:  # Halide refuses: the rounded-up tiles read past the input
        assert strategy in T.ROUNDING and margin == 0
        with pytest.raises(LoomError, match="ImageParam 'inp': the pipeline reads dimension 0 over"):
            run_cpu(out, {"inp": image}, (W, H))
        return
    np.testing.assert_array_equal(run_cpu(out, {"inp": image}, (W, H)), want)
    np.testing.assert_array_equal(lp.evaluate(out, {"inp": image}, (W, H)), want)


def loom_histogram_like(strategy):
    """An update over pure Vars (out += out shifted): recomputing a point would change the result."""
    inp = lp.ImageParam(lp.Int32, 1, "inp")
    x, xo, xi = lp.Var("x"), lp.Var("xo"), lp.Var("xi")
    f = lp.Func("f")
    f[x] = inp[x] * 3
    f[x] = f[x] * 2 + 1
    f.update().split(x, xo, xi, 4, strategy)
    g = lp.Func("g")
    g[x] = f[x] + 1
    f.compute_root()
    return g


def halide_histogram_like(strategy):
    inp = hl.ImageParam(hl.Int(32), 1, "inp")
    x, xo, xi = hl.Var("x"), hl.Var("xo"), hl.Var("xi")
    f = hl.Func("f")
    f[x] = inp[x] * 3
    f[x] = f[x] * 2 + 1
    f.update().split(x, xo, xi, 4, _hl_tail(strategy))
    g = hl.Func("g")
    g[x] = f[x] + 1
    f.compute_root()
    return inp, g


@pytest.mark.parametrize("strategy", [T.GuardWithIf, T.RoundUp, T.Auto])
def test_split_update_matches_halide(strategy):
    a = np.arange(-5, 9, dtype=np.int32)
    inp, g = halide_histogram_like(strategy)
    want = halide_realize(inp, g, a, (10,))
    np.testing.assert_array_equal(run_cpu(loom_histogram_like(strategy), {"inp": a}, (10,)), want)
    np.testing.assert_array_equal(want, (a[:10] * 3) * 2 + 2)


def test_shift_inwards_on_an_update_is_refused_like_halide():
    with pytest.raises(hl.HalideError, match="ShiftInwards is not a legal tail strategy for update definitions"):
        inp, g = halide_histogram_like(T.ShiftInwards)
        halide_realize(inp, g, np.arange(10, dtype=np.int32), (10,))
    with pytest.raises(LoomError, match="split: ShiftInwards is not a legal tail strategy for 'x' of an update "
                                        "definition") as e:
        loom_histogram_like(T.ShiftInwards)
    assert "f.update(0)" in str(e.value)


def test_unroll_with_a_tail_strategy():
    image = np.random.default_rng(2).integers(0, 256, size=(H + 2, W + 2), dtype=np.uint8)
    inp, hout = halide_blur(T.GuardWithIf)
    hout.unroll(hl.Var("xi"), 3, hl.TailStrategy.GuardWithIf)
    want = halide_realize(inp, hout, image, (W, H))
    out = loom_blur(T.GuardWithIf)
    out.unroll("xi", 3, T.GuardWithIf)
    np.testing.assert_array_equal(run_cpu(out, {"inp": image}, (W, H)), want)


def _producer_per_guarded_tile(m, t):
    x, y, xo, yo, xi, yi = (m.Var(n) for n in ("x", "y", "xo", "yo", "xi", "yi"))
    inp = m.ImageParam(t, 2, "inp")
    p = m.Func("p")
    p[x, y] = inp[x, y] + 1
    out = m.Func("out")
    out[x, y] = p[x, y] + p[x + 1, y]
    out.tile(x, y, xo, yo, xi, yi, 4, 3, m.TailStrategy.GuardWithIf)
    p.compute_at(out, xo)
    return inp, out


def test_guard_with_if_around_a_producer_computed_inside_matches_halide():
    """Halide clamps the producer's region to the guard. loom's tile regions have static sizes (p: 3 x 5 per
    4 x 3 tile); the last tiles' windows, past the end, have their bases clamped into what the pipeline reads,
    so p reads no column of the exactly sized input beyond W (it was refused)."""
    from loom.frontends.pipeline.cpu_lower import lower_pipeline

    image = np.random.default_rng(4).integers(0, 200, size=(H, W + 1), dtype=np.uint8)
    want = halide_realize(*_producer_per_guarded_tile(hl, hl.UInt(8)), image, (W, H))
    _, out = _producer_per_guarded_tile(lp, lp.UInt8)
    np.testing.assert_array_equal(run_cpu(out, {"inp": image}, (W, H)), want)
    assert "memref<3x5xi8>" in str(lower_pipeline(out, {"inp": image.shape}, (W, H)))


def test_an_unknown_tail_strategy_is_a_clear_error():
    x = lp.Var("x")
    f = lp.Func("f")
    f[x] = x
    with pytest.raises(LoomError, match="split: unknown tail strategy 'Sideways'; expected one of TailStrategy.Auto"):
        f.split(x, "xo", "xi", 4, "Sideways")


def _producer_inside_guarded_tile(m, t, level):
    """out tiled 4 x 3 with GuardWithIf (the tails of 10 x 7 are partial), a producer p and an inline sum, which
    Halide computes at the innermost loop."""
    x, y, xo, yo, xi, yi = (m.Var(n) for n in ("x", "y", "xo", "yo", "xi", "yi"))
    inp = m.ImageParam(t, 2, "inp")
    r = m.RDom(0, 3) if m is lp else hl.RDom([(0, 3)])
    p = m.Func("p")
    p[x, y] = inp[x, y] + 1
    out = m.Func("out")
    out[x, y] = p[x, y] + p[x + 1, y] + m.sum(inp[x + r.x, y])
    out.tile(x, y, xo, yo, xi, yi, 4, 3, m.TailStrategy.GuardWithIf)
    p.compute_at(out, {"xi": xi, "yi": yi}[level])
    return inp, out


@pytest.mark.parametrize("level", ["xi", "yi"])
def test_guard_with_if_around_producers_at_the_innermost_loops_matches_halide(level):
    """Once every guarded index is fixed by the open loops (the producer at xi, the innermost; an inline
    reduction, which the user cannot place) the guard goes before the producers: no point past the end is
    computed. At yi the x guard is still open over xi: p's window there is clamped into what the pipeline reads
    (it was refused)."""
    image = np.random.default_rng(3).integers(0, 200, size=(H, W + 3), dtype=np.uint8)
    hinp, hout = _producer_inside_guarded_tile(hl, hl.UInt(8), level)
    want = halide_realize(hinp, hout, image, (W, H))
    _, out = _producer_inside_guarded_tile(lp, lp.UInt8, level)
    np.testing.assert_array_equal(run_cpu(out, {"inp": image}, (W, H)), want)


def _vectorized_ramp(m, strategy, update_strategy):
    x = m.Var("x")
    f = m.Func("f")
    f[x] = x * 3
    f[x] += 1
    f.vectorize(x, 4, strategy)
    f.update(0).vectorize(x, 4, update_strategy)
    return f


@pytest.mark.parametrize("strategy", [T.Auto, T.GuardWithIf, T.ShiftInwards, T.RoundUp])
def test_vectorize_takes_a_tail_strategy_like_halide(strategy):
    """Halide's vectorize(x, n, tail) (it was a TypeError); ShiftInwards on an update is refused by both."""
    update_strategy = T.GuardWithIf if strategy == T.ShiftInwards else strategy
    want = np.asarray(_vectorized_ramp(hl, _hl_tail(strategy), _hl_tail(update_strategy)).realize([8]))
    np.testing.assert_array_equal(run_cpu(_vectorized_ramp(lp, strategy, update_strategy), {}, (8,)), want)
    with pytest.raises(hl.HalideError, match="ShiftInwards is not a legal tail strategy for update"):
        _vectorized_ramp(hl, _hl_tail(strategy), hl.TailStrategy.ShiftInwards).realize([8])
    with pytest.raises(LoomError, match="vectorize: ShiftInwards is not a legal tail strategy for 'x' of an update"):
        _vectorized_ramp(lp, strategy, T.ShiftInwards)
