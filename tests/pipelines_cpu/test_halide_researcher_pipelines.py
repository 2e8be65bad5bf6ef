"""A second researcher's pipelines (``researcher_pipelines.py``) on the CPU path, bit-exact against real Halide:
a float bilateral grid, a local-Laplacian-style pyramid, a separable Gaussian under eight schedules, a median
network, a Canny-like detector with atan2, an integral image, a matmul with rfactor, a bilinear resize by float
Params, Tuple outputs, Euclidean division with shifts and bit operations, u8 saturating arithmetic, Params of eight
types, every boundary condition on three channels, a 12-bit histogram equalisation with rfactor and a GRBG demosaic
into a Tuple. Float pipelines run Halide with ``strict_float`` (loom's float semantics: no fused multiply-adds), so
they too are compared bit for bit.

By default each pipeline runs one of its schedules at one size (taken in turn, 1x1 and one-pixel-wide among them)
(the whole set takes a minute); ``LOOM_FUZZ_SCALE`` > 1 runs every schedule at every size and 40 random schedules
(``researcher_fuzz.py``) of four pipelines (all agreed when this was written, except where Halide itself
fails: a ShiftInwards split wider than the image). Then hostile schedules and inputs.
"""

import os

import numpy as np
import pytest
from tests.pipelines_cpu.halide_oracle import hl

import loom.frontends.pipeline as lp
import loom.jit  # noqa: F401  (Func.realize)
from loom.errors import LoomError
from tests.pipelines_cpu.researcher_fuzz import GRAPHS, draw
from tests.pipelines_cpu.researcher_pipelines import FLOAT, PIPELINES, realize
from tests.pipelines_cpu.user_pipelines import image, vars_

SIZES = [(1, 1), (13, 7), (1, 9), (17, 13), (9, 1), (5, 3), (23, 11)]
SCALE = int(os.environ.get("LOOM_FUZZ_SCALE", "1"))


# the schedule each pipeline runs by default (a cheap one to compile, still scheduled); int_arith_i8 and
# demosaic_tuple (three elements, each compiled: 4 s) only at scale
DEFAULT = {"bilateral_f32": "sliding", "local_laplacian": "root", "gauss_separable": "fuse_parallel",
           "median3x3": "inline", "canny_like": "root", "integral_box": "parallel", "matmul": "rfactor",
           "resize_bilinear": "tiles", "tuple_gradient": "root", "int_arith_i32": "vector", "int_arith_u16": "split",
           "u8_blend": "split", "many_params": "parallel", "boundaries_3d": "root", "hist_eq_u16": "rfactor"}


def _cases():
    out = []
    for i, (name, (_, scheds)) in enumerate(PIPELINES.items()):
        for sched in scheds if SCALE > 1 else [DEFAULT[name]] if name in DEFAULT else []:
            for size in SIZES if SCALE > 1 else [SIZES[i % len(SIZES)]]:
                if sched == "split" and name.startswith("int_arith") and size[0] < 3:
                    continue  # Halide's ShiftInwards reads before the input on an image narrower than the split
                out.append((name, sched, size))
    return out


CASES = _cases()


def _as_list(v):
    return v if isinstance(v, list) else [v]


@pytest.mark.parametrize("name, sched, size", CASES, ids=[f"{n}-{s}-{w}x{h}" for n, s, (w, h) in CASES])
def test_a_researchers_pipeline_is_bit_exact_against_halide(name, sched, size):
    want, got = (_as_list(realize(m, name, *size, sched)) for m in (hl, lp))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_array_equal(g, w)


FUZZ = [(name, seed) for name in GRAPHS for seed in range(40 if SCALE > 1 else 0)]


@pytest.mark.parametrize("name, seed", FUZZ, ids=[f"{n}-{s}" for n, s in FUZZ])
def test_a_random_schedule_of_a_researchers_pipeline_is_bit_exact(name, seed):
    """A schedule Halide refuses (a Func stored outside a vectorized loop and computed inside it) loom refuses too."""
    out, inputs, params, size, log = draw(hl, name, seed)
    for _, (p, a) in inputs.items():
        p.set(hl.Buffer(a))
    for _, (p, v) in params.items():
        p.set(v.item())
    target = hl.get_jit_target_from_environment()
    if name in FLOAT:
        target = target.with_feature(hl.TargetFeature.StrictFloat)
    try:
        want = np.asarray(out.realize(list(size), target))
    except (RuntimeError, hl.HalideError):
        want = None
    out, inputs, params, size, _ = draw(lp, name, seed)
    given = {k: a for k, (_, a) in inputs.items()} | {k: v for k, (_, v) in params.items()}
    if want is None:
        with pytest.raises(LoomError):
            out.realize(list(size), given)
        return
    np.testing.assert_array_equal(np.asarray(out.realize(list(size), given)), want, err_msg=log)


# ---- casts ------------------------------------------------------------------------------------------------
VALUES = np.array([np.nan, np.inf, -np.inf, 3e9, -3e9, 2.7, -2.7, 300.5, -1.5, 1e20, 65535.9, 2147483520.0,
                   -2147483648.0, 0.0, -0.0, 127.9, -128.9, 255.5], np.float32)
INTS = ["i8", "i16", "i32", "u8", "u16", "u32"] if SCALE > 1 else ["i8", "u32"]


def _cast(m, kind, saturating):
    x = m.Var("x")
    inp = m.ImageParam(m.Float(32) if m is hl else lp.Float32, 1, "inp")
    t = getattr(lp, {"i": "Int", "u": "UInt"}[kind[0]] + kind[1:]) if m is lp else \
        (m.Int if kind[0] == "i" else m.UInt)(int(kind[1:]))
    f = m.Func("f")
    f[x] = m.saturating_cast(t, inp[x]) if saturating else m.cast(t, inp[x])
    return f, inp


def _loom_cast_reference(kind, saturating):
    """loom's defined float -> int conversion: NaN and infinities 0, truncation, wrap-around through i64
    (cpu_scalar._float_to_int); saturating: clamp to the type's range first (a NaN stays NaN, so 0)."""
    info = np.iinfo(np.dtype(kind.replace("u", "uint").replace("i", "int") if kind[0] == "i" else
                             kind.replace("u", "uint")))
    v = VALUES.astype(np.float64)
    if saturating:
        v = np.clip(v, info.min, info.max)
    v = np.where(np.isfinite(v), np.trunc(np.nan_to_num(v, posinf=0, neginf=0)), 0)
    return v.astype(np.int64).astype(info.dtype)


@pytest.mark.parametrize("kind", INTS)
@pytest.mark.parametrize("saturating", [False, True])
def test_float_to_int_matches_halide_in_range_and_is_defined_outside(kind, saturating):
    """In range (and, saturating, at +-inf) loom equals Halide. Outside it a plain cast is undefined in Halide
    (LLVM's fptosi: poison; this machine gives INT_MIN or garbage, its vector and scalar code may differ), as is a
    NaN through saturating_cast: loom defines both (docs/pipelines.md) instead of reading an undefined value."""
    f, inp = _cast(hl, kind, saturating)
    inp.set(hl.Buffer(VALUES))
    want = np.asarray(f.realize([len(VALUES)]))
    f, _ = _cast(lp, kind, saturating)
    got = np.asarray(f.realize([len(VALUES)], {"inp": VALUES}))
    ref = _loom_cast_reference(kind, saturating)
    np.testing.assert_array_equal(got, ref)
    info = np.iinfo(got.dtype)
    fits = np.isfinite(VALUES) & (np.trunc(VALUES.astype(np.float64)) >= info.min) & \
        (np.trunc(VALUES.astype(np.float64)) <= info.max)
    same = ~np.isnan(VALUES) if saturating else fits
    np.testing.assert_array_equal(got[same], want[same])


@pytest.mark.parametrize("kind, value", [("UInt16", -3), ("UInt8", 300), ("Int8", 2 ** 31 - 1),
                                         ("UInt64", -2 ** 40), ("UInt16", 2 ** 33 + 5), ("UInt32", -3)])
def test_casting_an_int_literal_that_does_not_fit_wraps_as_halide(kind, value):
    """cast(u16, -3) is Halide's i32 constant -3 cast with wrap-around, 65533; loom refused it ("does not fit in
    u16; cast explicitly", which it was)."""
    ht = (hl.Int if kind.startswith("Int") else hl.UInt)(int(kind[-2:].lstrip("t")))
    x = hl.Var("x")
    h = hl.Func("h")
    h[x] = hl.cast(ht, value)
    want = np.asarray(h.realize([1]))
    f = lp.Func("f")
    xl = lp.Var("x")
    f[xl] = lp.cast(getattr(lp, kind), value)
    np.testing.assert_array_equal(np.asarray(f.realize([1])), want)


# ---- NaN into an index, floor of an unranged Param --------------------------------------------------------
def test_a_nan_clamped_into_an_input_index_is_refused_naming_the_cast():
    """The same read of an ImageParam without a boundary condition: Halide clamps the NaN (its min/max return
    the other operand), loom's cast of NaN gives index -2, before the input: refused naming why."""
    x = lp.Var("x")
    w, lut = lp.ImageParam(lp.Float32, 1, "w"), lp.ImageParam(lp.Int32, 1, "lut")
    out = lp.Func("out")
    out[x] = lut[lp.i32(lp.clamp(w[x], 2.0, 4.0)) - 2]
    with pytest.raises(LoomError, match=r"ImageParam 'lut': the pipeline reads dimension 0 over \[-2, 2\] but the "
                                        r"input has extent 3 \(reads before index 0 need a boundary condition\); "
                                        r"an index converts a float to an integer, which gives 0 for NaN"):
        out.realize([2], {"w": np.array([np.nan, 3.0], np.float32), "lut": np.arange(3, dtype=np.int32)})
    out2 = lp.Func("out2")  # a float that cannot be NaN: an i32 Var's conversion, scaled by a constant
    out2[x] = lut[lp.i32(lp.clamp(lp.f32(x) * 0.5, 2.0, 4.0)) - 2]
    np.testing.assert_array_equal(np.asarray(out2.realize([4], {"lut": np.array([7, 8, 9], np.int32)})),
                                  [7, 7, 7, 7])


def test_floor_of_a_clamped_unranged_float_param_is_bounded():
    """``hz[x, i32(floor(clamp(y * sy, 0.0, 4.0)))]``: floor had no interval rule, so the clamp's [0, 4] was lost
    and loom refused the read as indexed by Param sy without a range; Halide bounds it."""
    def build(m):
        x, y = m.Var("x"), m.Var("y")
        inp = m.ImageParam(m.UInt(8) if m is hl else lp.UInt8, 2, "inp")
        sy = m.Param(m.Float(32) if m is hl else lp.Float32, "sy")
        hz, out = m.Func("hz"), m.Func("out")
        hz[x, y] = m.u16(inp[x, y]) * 3
        out[x, y] = hz[x, m.i32(m.floor(m.clamp(m.f32(y) * sy, 0.0, 4.0)))] + \
            hz[x, m.i32(m.ceil(m.clamp(m.f32(y) * sy, 0.0, 3.0)))]
        hz.compute_root()
        return out, inp, sy
    a = image((5, 4), "u8", 2)
    out, inp, sy = build(hl)
    inp.set(hl.Buffer(a))
    sy.set(0.7)
    want = np.asarray(out.realize([4, 8]))
    out, _, _ = build(lp)
    np.testing.assert_array_equal(np.asarray(out.realize([4, 8], {"inp": a, "sy": np.float32(0.7)})), want)


def test_a_ranged_float_param_refuses_nan():
    """NaN compared false with both ends and passed the range check, which bounds inference relies on."""
    p = lp.Param(lp.Float32, "p", min=0.0, max=2.0)
    with pytest.raises(LoomError, match=r"Param 'p': value nan is outside the Param's range \[0.0, 2.0\]"):
        p.set(float("nan"))


# ---- hostile schedules ------------------------------------------------------------------------------------------
def _scheduled(kind):
    def build(m):
        x, y, xo, xi, z, t = vars_(m, "x y xo xi z t")
        inp = m.ImageParam(m.UInt(8) if m is hl else lp.UInt8, 2, "inp")
        f, out = m.Func("f"), m.Func("out")
        f[x, y] = inp[x, y] + 1
        out[x, y] = f[x, y] * 2
        {"split a Var twice": lambda: out.split(x, xo, xi, 2).split(x, xo, xi, 3),
         "a negative split": lambda: out.split(x, xo, xi, -2),
         "a float split": lambda: out.split(x, xo, xi, 2.5),
         "a split beyond i32": lambda: out.split(x, xo, xi, 2 ** 40),
         "a bool split": lambda: out.split(x, xo, xi, True),
         "reorder an unknown Var": lambda: out.reorder(z, x),
         "vectorize an unknown Var": lambda: out.vectorize(z),
         "unroll by -1": lambda: out.unroll(x, -1),
         "fuse a Var with itself": lambda: out.fuse(x, x, t),
         "store_at a loop that does not exist": lambda: f.store_at(out, z).compute_at(out, y),
         "compute_at a Var split away": lambda: (out.split(x, xo, xi, 2), f.compute_at(out, x)),
         "bound an unknown Var": lambda: out.bound(z, 0, 3)}[kind]()
        return out, inp
    return build


HOSTILE = {
    "split a Var twice": r"Func 'out': split: unknown variable 'x' \(loops, innermost first: xi, xo, y\)",
    "a negative split": r"Func 'out': split: factor must be a positive int, got -2",
    "a float split": r"Func 'out': split: factor must be a positive int, got 2.5",
    "a split beyond i32": r"Func 'out': split: factor must be a positive int, got 1099511627776 \(below 2\*\*31",
    "a bool split": r"Func 'out': split: factor must be a positive int, got True",
    "reorder an unknown Var": r"Func 'out': reorder: unknown variable 'z'",
    "vectorize an unknown Var": r"Func 'out': vectorize: unknown variable 'z'",
    "unroll by -1": r"Func 'out': split: factor must be a positive int, got -1",
    "fuse a Var with itself": r"Func 'out': fuse: 'x' must be directly inside 'x'",
    "store_at a loop that does not exist": r"Func 'f': store_at\(out, z\): 'z' is not a loop of consumer 'out'",
    "compute_at a Var split away": r"Func 'f': compute_at\(out, x\): 'x' is not a loop of consumer 'out'",
    "bound an unknown Var": r"Func 'out': bound: unknown variable 'z' \(pure variables: x, y\)",
}
A = image((5, 6), "u8", 0)


@pytest.mark.parametrize("kind", list(HOSTILE))
def test_a_bad_schedule_halide_refuses_is_refused_by_name(kind):
    with pytest.raises(Exception):  # noqa: B017 (Halide's bindings raise RuntimeError or HalideError)
        out, inp = _scheduled(kind)(hl)
        inp.set(hl.Buffer(A))
        out.realize([6, 5])
    with pytest.raises(LoomError, match=HOSTILE[kind]):
        out, _ = _scheduled(kind)(lp)
        out.realize([6, 5], {"inp": A})


def test_a_numpy_integer_split_factor_is_a_factor():
    x, xo, xi = vars_(lp, "x xo xi")
    f = lp.Func("f")
    f[x] = x * 2
    f.split(x, xo, xi, np.int64(3))
    np.testing.assert_array_equal(np.asarray(f.realize([7])), np.arange(7) * 2)


@pytest.mark.parametrize("size", [[6.0, 5], [True, 5]])
def test_a_size_that_is_not_an_int_is_refused(size):
    x, y = lp.Var("x"), lp.Var("y")
    g = lp.Func("g")
    g[x, y] = x + y
    with pytest.raises(LoomError, match=r"Func 'g': size .*: dimension 0 is (6.0|True), expected an int"):
        g.realize(size)


def test_a_bound_does_not_limit_an_update_written_by_data():
    """``f[idx[r]] = r`` with ``f.bound(x, 0, 5)``: refused (Halide too: unbounded access), without advising the
    bound it already has."""
    x = lp.Var("x")
    idx = lp.ImageParam(lp.Int32, 1, "idx")
    f = lp.Func("f")
    r = lp.RDom([(0, 3)])
    f[x] = 0
    f[idx[r.x]] = r.x
    f.bound(x, 0, 5)
    with pytest.raises(LoomError, match=r"Func 'f': cannot bound dimension 0 .*: an index depends on data without "
                                        r"limits; clamp the index; f.bound limits only what its consumers read"):
        f.realize([5], {"idx": np.array([1, 4, 100], np.int32)})


def test_storage_larger_than_memory_is_refused_not_aborted():
    """A root Func read at ``x * 60000``: 6e7 x 6e7 i32. The generated C's malloc failed and abort() ended the
    Python process."""
    x, y = lp.Var("x"), lp.Var("y")
    f, out = lp.Func("f"), lp.Func("out")
    f[x, y] = x + y
    f.compute_root()
    out[x, y] = f[x * 60000, y * 60000]
    with pytest.raises(LoomError, match=r"Func 'f': its storage of 59940001 x 59940001 i32 .* is more than this "
                                        r"machine's memory"):
        out.realize([1000, 1000])


# ---- a data-dependent offset inside a tile ----------------------------------------------------------------------
def _data_offset(m):
    x, y, xo, yo, xi, yi = vars_(m, "x y xo yo xi yi")
    inp = m.ImageParam(m.UInt(8) if m is hl else lp.UInt8, 2, "inp")
    cl = m.BoundaryConditions.repeat_edge(inp)
    mag, out = m.Func("mag"), m.Func("out")
    mag[x, y] = m.u16(cl[x, y]) * 3 + m.u16(x)
    out[x, y] = mag[x + m.select(cl[x, y] > 128, 1, -1), y + m.select(cl[x, y] % 2 == 0, 1, 0)]
    out.tile(x, y, xo, yo, xi, yi, 8, 8, m.TailStrategy.GuardWithIf)
    mag.compute_at(out, xo)
    return out, inp


def test_a_data_dependent_offset_keeps_the_producer_per_tile():
    """Canny's non-maximum suppression reads ``mag[x + dx, y + dy]`` with dx, dy chosen by select from the pixel's
    direction. The Vars inside the direction's read made the index move with two tile bases, so each 8x8 tile
    computed mag over the whole image (canny_like's "tiles" schedule at 640x480: 27 s, Halide 78 ms); the read's
    value range bounds the offset, as in Halide: mag's storage is 10 x 9 per tile."""
    from xdsl.dialects import memref
    a = image((17, 23), "u8", 5)
    out, inp = _data_offset(hl)
    inp.set(hl.Buffer(a))
    want = np.asarray(out.realize([23, 17]))
    out, _ = _data_offset(lp)
    np.testing.assert_array_equal(np.asarray(out.realize([23, 17], {"inp": a})), want)
    module = lp.lower_pipeline(out, {"inp": (40, 60)}, (60, 40))
    shapes = [op.memref.type.get_shape() for op in module.walk() if isinstance(op, (memref.AllocOp, memref.AllocaOp))]
    assert shapes == [(9, 10)]


def test_a_region_too_large_names_its_size_not_data():
    """A RoundUp split by 2**28 rounds the output (and what it reads) up to 2**28 points: refused naming the size
    and the split; it said "an index depends on data without limits", which there is none of."""
    x, xo, xi = vars_(lp, "x xo xi")
    f, out = lp.Func("f"), lp.Func("out")
    f[x] = x * 2
    out[x] = f[x] + 1
    out.split(x, xo, xi, 2 ** 28, lp.TailStrategy.RoundUp)
    f.compute_at(out, xo)
    with pytest.raises(LoomError, match=r"Func 'f': cannot bound dimension 0 \(inferred \[0, 268435455\]\): "
                                        r"268435456 points are more than loom realises \(67108864\): .*RoundUp"):
        out.realize([6])
