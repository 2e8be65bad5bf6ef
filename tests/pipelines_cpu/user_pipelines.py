"""Image-processing and DNN pipelines a researcher brings to the CPU path, each written once for loom and Halide.

Every builder takes ``m`` (``loom.frontends.pipeline`` or ``halide``), the output size ``(W, H)`` and a seed,
and returns ``(out, inputs, params, size)``: the output Func, ``{name: (ImageParam, array)}``,
``{name: (Param, value)}`` and the size to realise (x first). ``realize_with`` realises one on either side.
"""

from __future__ import annotations

import numpy as np

import loom.frontends.pipeline as lp

_NAMES = {"u8": ("UInt8", "UInt", 8), "u16": ("UInt16", "UInt", 16), "u32": ("UInt32", "UInt", 32),
          "i8": ("Int8", "Int", 8), "i16": ("Int16", "Int", 16), "i32": ("Int32", "Int", 32),
          "f32": ("Float32", "Float", 32)}
_DTYPES = {"u8": np.uint8, "u16": np.uint16, "u32": np.uint32, "i8": np.int8, "i16": np.int16, "i32": np.int32,
           "f32": np.float32}


def ty(m, name: str):
    loom_name, kind, bits = _NAMES[name]
    return getattr(lp, loom_name) if m is lp else getattr(m, kind)(bits)


def rdom(m, *pairs, name=None):
    return m.RDom(list(pairs)) if name is None or m is lp else m.RDom(list(pairs), name)


def image(shape, kind: str, seed: int, lo=None, hi=None):
    rng = np.random.default_rng(seed)
    if kind == "f32":
        return rng.uniform(-1.0 if lo is None else lo, 1.0 if hi is None else hi, shape).astype(np.float32)
    info = np.iinfo(_DTYPES[kind])
    return rng.integers(info.min if lo is None else lo, (info.max if hi is None else hi) + 1, shape,
                        dtype=_DTYPES[kind])


def vars_(m, names: str):
    return [m.Var(n) for n in names.split()]


# ---------------------------------------------------------------------------------------------------------------
def bilateral_grid(m, W, H, seed=0, sched="root"):
    """A u8 bilateral grid: a histogram per 4x4 block over 8 intensity bins (a data-dependent index, a Var on the
    left of an update), a 1-2-1 blur along z, y and x, then a slice at each pixel's own bin, normalised."""
    s = 4
    x, y, z, c = vars_(m, "x y z c")
    inp = m.ImageParam(ty(m, "u8"), 2, "inp")
    cl = m.BoundaryConditions.repeat_edge(inp)
    hist, bz, by, bx, out = (m.Func(n) for n in ("hist", "bz", "by", "bx", "out"))
    r = rdom(m, (0, s), (0, s))
    v = cl[x * s + r.x - s // 2, y * s + r.y - s // 2]
    zi = m.i32(v) / 32
    hist[x, y, z, c] = m.u32(0)
    hist[x, y, zi, c] += m.select(c == 0, m.u32(v), m.u32(1))
    bz[x, y, z, c] = hist[x, y, z - 1, c] + 2 * hist[x, y, z, c] + hist[x, y, z + 1, c]
    by[x, y, z, c] = bz[x, y - 1, z, c] + 2 * bz[x, y, z, c] + bz[x, y + 1, z, c]
    bx[x, y, z, c] = by[x - 1, y, z, c] + 2 * by[x, y, z, c] + by[x + 1, y, z, c]
    zv = m.i32(cl[x, y]) / 32
    gx, gy = (x + s // 2) / s, (y + s // 2) / s
    out[x, y] = m.u8(bx[gx, gy, zv, 0] / m.max(bx[gx, gy, zv, 1], 1))
    xo, yo, xi, yi = vars_(m, "xo yo xi yi")
    if sched == "root":
        for f in (hist, bz, by, bx):
            f.compute_root()
    else:  # the grid at the root, the blurs per output tile
        hist.compute_root()
        out.tile(x, y, xo, yo, xi, yi, 8, 8)
        bx.compute_at(out, xo)
        by.compute_at(out, xo)
        bz.compute_at(out, xo)
    a = image((H, W), "u8", seed)
    return out, {"inp": (inp, a)}, {}, (W, H)


def tuple_min_max(m, W, H, seed=0):
    """A Tuple-valued running (min, max) down each column (an update over an RDom), read as the column's range,
    and a Tuple output (the range and the column's argmax row)."""
    x, y = vars_(m, "x y")
    inp = m.ImageParam(ty(m, "u8"), 2, "inp")
    mm, out = m.Func("mm"), m.Func("out")
    r = rdom(m, (0, H))
    mm[x] = (m.u8(255), m.u8(0))
    mm[x] = (m.min(mm[x][0], inp[x, r.x]), m.max(mm[x][1], inp[x, r.x]))
    am = m.argmax(inp[x, r.x])
    out[x, y] = (mm[x][1] - mm[x][0] + m.u8(y), am[0] + y)
    mm.compute_root()
    a = image((H, W), "u8", seed)
    return out, {"inp": (inp, a)}, {}, (W, H)


def where_sums(m, W, H, seed=0):
    """A triangular 5x5 window (RDom.where on its own RVars) beside a data-dependent predicate (pixels above a
    threshold), over a mirrored input."""
    x, y = vars_(m, "x y")
    inp = m.ImageParam(ty(m, "u8"), 2, "inp")
    cl = m.BoundaryConditions.mirror_image(inp)
    tri, bright, out = m.Func("tri"), m.Func("bright"), m.Func("out")
    r = rdom(m, (-2, 5), (-2, 5))
    r.where(r.x <= r.y)
    tri[x, y] = m.u16(0)
    tri[x, y] += m.u16(cl[x + r.x, y + r.y])
    q = rdom(m, (-1, 3), (-1, 3))
    q.where(cl[x + q.x, y + q.y] > 100)
    bright[x, y] = m.sum(m.u16(cl[x + q.x, y + q.y]))
    out[x, y] = tri[x, y] + bright[x, y] * 3
    tri.compute_root()
    a = image((H, W), "u8", seed)
    return out, {"inp": (inp, a)}, {}, (W, H)


def inline_reductions(m, W, H, seed=0):
    """A 3x3 morphological gradient (maximum - minimum), a 5x1 box sum and a 3x3 argmax's offset, clamped reads."""
    x, y = vars_(m, "x y")
    inp = m.ImageParam(ty(m, "i16"), 2, "inp")
    cl = m.BoundaryConditions.repeat_edge(inp)
    out = m.Func("out")
    r = rdom(m, (-1, 3), (-1, 3))
    k = rdom(m, (-2, 5))
    am = m.argmax(cl[x + r.x, y + r.y])
    grad = m.i32(m.maximum(cl[x + r.x, y + r.y])) - m.i32(m.minimum(cl[x + r.x, y + r.y]))
    out[x, y] = grad + m.sum(m.i32(cl[x + k.x, y])) * 4 + am[0] * 3 + am[1]
    a = image((H, W), "i16", seed, -300, 300)
    return out, {"inp": (inp, a)}, {}, (W, H)


def rfactor_sums(m, W, H, seed=0):
    """Per-channel totals and maxima of a 3-channel u8 image, both rfactored over rows (intermediates at the
    root, parallel over the rows)."""
    c, u = vars_(m, "c u")
    inp = m.ImageParam(ty(m, "u8"), 3, "inp")
    tot, mx, out = m.Func("tot"), m.Func("mx"), m.Func("out")
    r = rdom(m, (0, W), (0, H))
    tot[c] = m.u32(0)
    tot[c] += m.u32(inp[r.x, r.y, c])
    mx[c] = m.u8(0)
    mx[c] = m.max(mx[c], inp[r.x, r.y, c])
    out[c] = tot[c] * 2 + m.u32(mx[c])
    it = tot.update(0).rfactor(r.y, u)
    it.compute_root().update(0).parallel(u)
    im = mx.update(0).rfactor(r.y, u)
    im.compute_root()
    tot.compute_root()
    mx.compute_root()
    a = image((3, H, W), "u8", seed)
    return out, {"inp": (inp, a)}, {}, (3,)


def fused_tiles(m, W, H, seed=0):
    """A 3x3 blur whose tiles' two loops are fused and run in parallel, the blur's producer per fused tile."""
    x, y, xo, yo, xi, yi, t = vars_(m, "x y xo yo xi yi t")
    inp = m.ImageParam(ty(m, "u16"), 2, "inp")
    cl = m.BoundaryConditions.constant_exterior(inp, 7)
    sq, out = m.Func("sq"), m.Func("out")
    sq[x, y] = m.u32(cl[x, y]) * m.u32(cl[x, y]) >> 4
    out[x, y] = sq[x - 1, y - 1] + sq[x, y] * 2 + sq[x + 1, y + 1] + sq[x + 1, y - 1]
    out.tile(x, y, xo, yo, xi, yi, 8, 4, m.TailStrategy.GuardWithIf).fuse(xo, yo, t).parallel(t)
    sq.compute_at(out, t)
    a = image((H, W), "u16", seed)
    return out, {"inp": (inp, a)}, {}, (W, H)


TAILS = ["Auto", "RoundUp", "GuardWithIf", "ShiftInwards", "PredicateLoads", "PredicateStores"]


def split_tail(m, W, H, seed=0, tail="GuardWithIf"):
    """A producer computed per 8-wide tile of its consumer (split by ``tail``) and itself split by 3 with the same
    tail; an update over an RDom split too (ShiftInwards refused on updates: GuardWithIf there)."""
    x, y, xo, xi, po, pi = vars_(m, "x y xo xi po pi")
    inp = m.ImageParam(ty(m, "i32"), 2, "inp")
    cl = m.BoundaryConditions.repeat_edge(inp)
    p, acc, out = m.Func("p"), m.Func("acc"), m.Func("out")
    p[x, y] = cl[x, y] * 3 - cl[x + 1, y]
    r = rdom(m, (0, 4))
    acc[x, y] = 0
    acc[x, y] += p[x + r.x, y] * (r.x + 1)
    out[x, y] = acc[x, y] - p[x, y]
    tl = getattr(m.TailStrategy, tail)
    out.split(x, xo, xi, 8, tl)
    p.compute_at(out, xo).split(x, po, pi, 3, tl)
    acc.compute_at(out, xo)
    upd = m.TailStrategy.GuardWithIf if tail == "ShiftInwards" else tl
    acc.update(0).split(x, po, pi, 3, upd)
    a = image((H, W), "i32", seed, -1000, 1000)
    return out, {"inp": (inp, a)}, {}, (W, H)


BOUNDARIES = ["repeat_edge", "constant_exterior", "mirror_image", "mirror_interior"]


def boundary_blur(m, W, H, seed=0, kind="mirror_image", in_shape=None):
    """A 5x5 weighted blur of an input of ``in_shape`` (smaller or larger than the output) through ``kind``."""
    x, y = vars_(m, "x y")
    inp = m.ImageParam(ty(m, "u8"), 2, "inp")
    bc = getattr(m.BoundaryConditions, kind)
    cl = bc(inp, 9) if kind == "constant_exterior" else bc(inp)
    out = m.Func("out")
    r = rdom(m, (-2, 5), (-2, 5))
    out[x, y] = m.u16(0)
    out[x, y] += m.u16(cl[x + r.x, y + r.y]) * m.u16(3 - m.abs(r.x) + 3 - m.abs(r.y))
    a = image(in_shape or (H, W), "u8", seed)
    return out, {"inp": (inp, a)}, {}, (W, H)


def params_levels(m, W, H, seed=0, offset=-20, gain=3, shift=2, bright=1.25):
    """Scalar Params: (i16(in) + offset) * gain >> shift saturated to u8, and a float brightness, rounded."""
    x, y = vars_(m, "x y")
    inp = m.ImageParam(ty(m, "u8"), 2, "inp")
    off = m.Param(ty(m, "i16"), "offset")
    g = m.Param(ty(m, "u8"), "gain")
    sh = m.Param(ty(m, "u8"), "shift")
    br = m.Param(ty(m, "f32"), "bright")
    lv, out = m.Func("lv"), m.Func("out")
    lv[x, y] = m.saturating_cast(ty(m, "u8"), ((m.i16(inp[x, y]) + off) * m.i16(g)) >> m.i16(sh))
    out[x, y] = m.u8(m.min(m.round(m.f32(lv[x, y]) * br), 255.0))
    a = image((H, W), "u8", seed)
    return out, {"inp": (inp, a)}, {"offset": (off, np.int16(offset)), "gain": (g, np.uint8(gain)),
                                    "shift": (sh, np.uint8(shift)), "bright": (br, np.float32(bright))}, (W, H)


def float_math(m, W, H, seed=0, which="exact"):
    """f32 math. ``exact``: sqrt, floor, round, ceil, trunc, abs, %, min/max, division by powers of two (Halide and
    libm agree bit for bit); ``approx``: exp, log, pow, atan2 (Halide's own approximations)."""
    x, y = vars_(m, "x y")
    inp = m.ImageParam(ty(m, "f32"), 2, "inp")
    cl = m.BoundaryConditions.repeat_edge(inp)
    out = m.Func("out")
    v = cl[x, y] * 8.0
    if which == "exact":  # Halide's simplifier reassociates float sums and LLVM fuses them: strict_float stops it
        e = m.sqrt(m.abs(v)) + m.floor(v) * 0.5 + m.round(v * 3.0) - m.ceil(cl[x + 1, y] * 5.0) \
            + m.trunc(v) + (v % 1.5) + m.max(v, cl[x, y + 1])
        out[x, y] = e if m is lp else m.strict_float(e)
    else:
        out[x, y] = m.exp(cl[x, y]) + m.log(m.abs(v) + 1.0) + m.pow(m.abs(v) + 0.5, cl[x, y + 1]) \
            + m.atan2(v, cl[x + 1, y] + 0.25)
    a = image((H, W), "f32", seed)
    return out, {"inp": (inp, a)}, {}, (W, H)


def casts(m, W, H, seed=0):
    """Integer casts that wrap (u8(i16), i8(u16), u16(i32) of negatives) beside saturating ones, packed in i32."""
    x, y = vars_(m, "x y")
    inp = m.ImageParam(ty(m, "i16"), 2, "inp")
    out = m.Func("out")
    v = inp[x, y]
    wrap = m.i32(m.u8(v)) + m.i32(m.i8(m.u16(v) * m.u16(3))) * 7 + m.i32(m.u16(m.i32(v) * -5)) * 3
    sat = m.i32(m.saturating_cast(ty(m, "u8"), v)) * 11 + m.i32(m.saturating_cast(ty(m, "i8"), v * m.i16(2))) * 13 \
        + m.i32(m.saturating_cast(ty(m, "u16"), m.i32(v) * 300))
    out[x, y] = wrap + sat
    a = image((H, W), "i16", seed)
    return out, {"inp": (inp, a)}, {}, (W, H)


def separable_schedule(m, W, H, seed=0):
    """A separable 1-4-6-4-1 blur: the vertical pass stored per tile row, computed per row (a sliding window),
    the output tiled, its rows in parallel, its x vectorized."""
    x, y, xo, yo, xi, yi = vars_(m, "x y xo yo xi yi")
    inp = m.ImageParam(ty(m, "u16"), 2, "inp")
    cl = m.BoundaryConditions.repeat_edge(inp)
    bv, bh = m.Func("bv"), m.Func("bh")
    bv[x, y] = (m.u32(cl[x, y - 2]) + 4 * m.u32(cl[x, y - 1]) + 6 * m.u32(cl[x, y]) + 4 * m.u32(cl[x, y + 1])
                + m.u32(cl[x, y + 2]))
    bh[x, y] = m.u16((bv[x - 2, y] + 4 * bv[x - 1, y] + 6 * bv[x, y] + 4 * bv[x + 1, y] + bv[x + 2, y]) >> 8)
    bh.split(y, yo, yi, 8, m.TailStrategy.GuardWithIf).parallel(yo).vectorize(x, 8, m.TailStrategy.GuardWithIf)
    bv.store_at(bh, yo).compute_at(bh, yi)
    a = image((H, W), "u16", seed)
    return bh, {"inp": (inp, a)}, {}, (W, H)


def several_rdoms(m, W, H, seed=0):
    """Update stages over several RDoms: a 3-tap sum, a max over a 2x2 window, a scan along x (a prefix sum read
    through its own previous value), all on an i32 Func computed at the root and read shifted."""
    x, y = vars_(m, "x y")
    inp = m.ImageParam(ty(m, "i16"), 2, "inp")
    cl = m.BoundaryConditions.repeat_edge(inp)
    f, out = m.Func("f"), m.Func("out")
    r1 = rdom(m, (-1, 3))
    r2 = rdom(m, (0, 2), (0, 2))
    r3 = rdom(m, (1, W + 1))
    f[x, y] = m.i32(cl[x, y])
    f[x, y] += m.i32(cl[x + r1.x, y]) * 2
    f[x, y] = m.max(f[x, y], m.i32(cl[x + r2.x, y + r2.y]) * 5)
    f[r3.x, y] = f[r3.x, y] + f[r3.x - 1, y] / 2
    out[x, y] = f[x + 1, y] - f[x, y]
    f.compute_root()
    a = image((H, W), "i16", seed, -500, 500)
    return out, {"inp": (inp, a)}, {}, (W, H)


def pyramid(m, W, H, seed=0, levels=3, sched="root"):
    """A Gaussian pyramid (a 1-3-3-1 4x4 down-sample) and back up (bilinear through x / 2, (x + 1) / 2): each level
    adds the detail it lost (a Laplacian reconstruction, so the output is near the input), i32."""
    x, y, xo, yo, xi, yi = vars_(m, "x y xo yo xi yi")
    inp = m.ImageParam(ty(m, "u16"), 2, "inp")
    cl = m.BoundaryConditions.mirror_interior(inp)
    k = [1, 3, 3, 1]
    down = [m.Func("g0")]
    down[0][x, y] = m.i32(cl[x, y])
    for j in range(1, levels):
        d = m.Func(f"g{j}")
        src = down[-1]
        d[x, y] = sum(k[i] * k[j2] * src[2 * x + i - 1, 2 * y + j2 - 1] for i in range(4) for j2 in range(4)) / 64
        down.append(d)
    up = down[-1]
    ups = []
    for j in range(levels - 2, -1, -1):
        u = m.Func(f"u{j}")
        ux = (up[x / 2, y / 2] + up[(x + 1) / 2, y / 2] + up[x / 2, (y + 1) / 2] + up[(x + 1) / 2, (y + 1) / 2]) / 4
        lap = m.Func(f"lap{j}")
        lap[x, y] = down[j][x, y] - ux
        u[x, y] = ux + lap[x, y]
        ups.append((u, lap))
        up = u
    out = m.Func("out")
    out[x, y] = up[x, y]
    if sched == "root":
        for f in down[1:]:
            f.compute_root()
        for u, _ in ups:
            u.compute_root()
    else:  # each level per tile of the next finer one
        out.tile(x, y, xo, yo, xi, yi, 8, 8, m.TailStrategy.GuardWithIf)
        for f in down[1:]:
            f.compute_root()
        ups[-1][0].compute_at(out, xo)
        for u, _ in ups[:-1]:
            u.compute_root()
    a = image((H, W), "u16", seed)
    return out, {"inp": (inp, a)}, {}, (W, H)


def conv_relu_pool(m, W, H, seed=0, sched="tiles"):
    """A DNN layer: a 3x3 convolution 3 -> 4 channels (i16 activations, i8 weights, i32 sums) with a bias, ReLU,
    a 2x2 max pool and a requantisation to i8 (a saturating shift); weights and bias are ImageParams."""
    x, y, c, o, xo, yo, xi, yi = vars_(m, "x y c o xo yo xi yi")
    inp = m.ImageParam(ty(m, "i16"), 3, "inp")
    wts = m.ImageParam(ty(m, "i8"), 4, "wts")
    bias = m.ImageParam(ty(m, "i32"), 1, "bias")
    cl = m.BoundaryConditions.constant_exterior(inp, 0)
    conv, relu, pool, out = m.Func("conv"), m.Func("relu"), m.Func("pool"), m.Func("out")
    r = rdom(m, (0, 3), (0, 3), (0, 3))
    conv[x, y, o] = bias[o]
    conv[x, y, o] += m.i32(cl[x + r.x - 1, y + r.y - 1, r.z]) * m.i32(wts[r.x, r.y, r.z, o])
    relu[x, y, o] = m.max(conv[x, y, o], 0)
    q = rdom(m, (0, 2), (0, 2))
    pool[x, y, o] = m.maximum(relu[2 * x + q.x, 2 * y + q.y, o])
    out[x, y, o] = m.saturating_cast(ty(m, "i8"), pool[x, y, o] >> 6)
    if sched == "tiles":
        out.tile(x, y, xo, yo, xi, yi, 4, 4, m.TailStrategy.GuardWithIf).reorder(xi, yi, xo, yo, o).parallel(o)
        conv.compute_at(out, xo)
        conv.update(0).reorder(x, r.x, r.y, r.z, y).vectorize(x, 4, m.TailStrategy.GuardWithIf)
    else:
        conv.compute_root()
    a = image((3, 2 * H, 2 * W), "i16", seed, -128, 127)
    w = image((4, 3, 3, 3), "i8", seed + 1)
    b = image((4,), "i32", seed + 2, -2000, 2000)
    return out, {"inp": (inp, a), "wts": (wts, w), "bias": (bias, b)}, {}, (W, H, 4)


def histogram_equalize(m, W, H, seed=0):
    """Histogram equalisation: a 256-bin histogram (a data-dependent index over an RDom of the image), its
    cumulative sum (a scan), and a lookup of each pixel (a data-dependent read)."""
    x, y, i = vars_(m, "x y i")
    inp = m.ImageParam(ty(m, "u8"), 2, "inp")
    hist, cdf, out = m.Func("hist"), m.Func("cdf"), m.Func("out")
    r = rdom(m, (0, W), (0, H))
    hist[i] = m.u32(0)
    hist[m.i32(inp[r.x, r.y])] += m.u32(1)
    s = rdom(m, (1, 255))
    cdf[i] = hist[i]
    cdf[s.x] = cdf[s.x - 1] + hist[s.x]
    out[x, y] = m.u8(cdf[m.i32(inp[x, y])] * 255 / m.u32(W * H))
    hist.compute_root()
    cdf.compute_root()
    a = image((H, W), "u8", seed, 40, 140)
    return out, {"inp": (inp, a)}, {}, (W, H)


def demosaic(m, W, H, seed=0):
    """A Bayer (RGGB) demosaic to three channels: x % 2, y % 2 choose among a pixel and its neighbours'
    averages; the green plane computed per tile."""
    x, y, c, xo, yo, xi, yi = vars_(m, "x y c xo yo xi yi")
    inp = m.ImageParam(ty(m, "u16"), 2, "inp")
    cl = m.BoundaryConditions.mirror_interior(inp)
    g, out = m.Func("g"), m.Func("out")
    ev_x, ev_y = x % 2 == 0, y % 2 == 0
    cross = (m.u32(cl[x - 1, y]) + m.u32(cl[x + 1, y]) + m.u32(cl[x, y - 1]) + m.u32(cl[x, y + 1])) / 4
    g[x, y] = m.select(ev_x == ev_y, cross, m.u32(cl[x, y]))
    diag = (m.u32(cl[x - 1, y - 1]) + m.u32(cl[x + 1, y - 1]) + m.u32(cl[x - 1, y + 1]) + m.u32(cl[x + 1, y + 1])) / 4
    horiz = (m.u32(cl[x - 1, y]) + m.u32(cl[x + 1, y])) / 2
    vert = (m.u32(cl[x, y - 1]) + m.u32(cl[x, y + 1])) / 2
    red = m.select(ev_x & ev_y, m.u32(cl[x, y]), ev_y, horiz, ev_x, vert, diag)
    blue = m.select((~ev_x) & (~ev_y), m.u32(cl[x, y]), ~ev_y, horiz, ~ev_x, vert, diag)
    out[x, y, c] = m.u16(m.select(c == 0, red, c == 1, g[x, y], blue))
    out.bound(c, 0, 3).reorder(c, x, y).tile(x, y, xo, yo, xi, yi, 6, 4, m.TailStrategy.GuardWithIf)
    g.compute_at(out, xo)
    a = image((H, W), "u16", seed, 0, 4095)
    return out, {"inp": (inp, a)}, {}, (W, H, 3)


def depthwise_separable(m, W, H, seed=0):
    """MobileNet's separable convolution: a depthwise 3x3 per channel (4 channels) then a pointwise 4 -> 6 mix,
    u8 activations, i16 weights, i32 sums, shifted back to u8 with saturation; the depthwise stage per row."""
    x, y, c, o = vars_(m, "x y c o")
    inp = m.ImageParam(ty(m, "u8"), 3, "inp")
    dww = m.ImageParam(ty(m, "i16"), 3, "dww")
    pww = m.ImageParam(ty(m, "i16"), 2, "pww")
    cl = m.BoundaryConditions.repeat_edge(inp)
    dw, pw = m.Func("dw"), m.Func("pw")
    r = rdom(m, (-1, 3), (-1, 3))
    dw[x, y, c] = m.sum(m.i32(cl[x + r.x, y + r.y, c]) * m.i32(dww[r.x + 1, r.y + 1, c]))
    k = rdom(m, (0, 4))
    pw[x, y, o] = m.saturating_cast(ty(m, "u8"), m.sum(dw[x, y, k.x] * m.i32(pww[k.x, o])) >> 8)
    dw.compute_at(pw, y)
    pw.reorder(o, x, y)
    a = image((4, H, W), "u8", seed)
    w1 = image((4, 3, 3), "i16", seed + 1, -64, 64)
    w2 = image((6, 4), "i16", seed + 2, -64, 64)
    return pw, {"inp": (inp, a), "dww": (dww, w1), "pww": (pww, w2)}, {}, (W, H, 6)


def unsharp_float(m, W, H, seed=0):
    """An f32 unsharp mask: a 3x3 box blur (weights 1/16 .. 4/16, exact in binary), the detail scaled and added
    back, clamped to [0, 1] and quantised to u8 with round; the blur computed per row of output."""
    x, y = vars_(m, "x y")
    inp = m.ImageParam(ty(m, "f32"), 2, "inp")
    cl = m.BoundaryConditions.mirror_image(inp)
    blur, out = m.Func("blur"), m.Func("out")
    blur[x, y] = (cl[x - 1, y - 1] + cl[x + 1, y - 1] + cl[x - 1, y + 1] + cl[x + 1, y + 1]) * 0.0625 \
        + (cl[x, y - 1] + cl[x - 1, y] + cl[x + 1, y] + cl[x, y + 1]) * 0.125 + cl[x, y] * 0.25
    sharp = m.clamp(cl[x, y] + (cl[x, y] - blur[x, y]) * 1.5, 0.0, 1.0)
    out[x, y] = m.u8(m.round(sharp * 255.0))
    blur.compute_at(out, y)
    a = image((H, W), "f32", seed, 0.0, 1.0)
    return out, {"inp": (inp, a)}, {}, (W, H)


def lut_lerp(m, W, H, seed=0):
    """A tone curve from a constant Buffer (a 256-entry LUT read by pixel value), blended with the pixel by a
    lerp whose weight is the local contrast (absd of neighbours), and a mux picking a channel gain by x % 3."""
    x, y = vars_(m, "x y")
    inp = m.ImageParam(ty(m, "u8"), 2, "inp")
    curve = (np.sqrt(np.arange(256) / 255.0) * 255).astype(np.uint8)
    lut = m.Buffer(curve, "curve") if m is lp else m.Buffer(curve)
    cl = m.BoundaryConditions.repeat_edge(inp)
    out = m.Func("out")
    v = cl[x, y]
    toned = lut[m.i32(v)]
    w = m.absd(cl[x - 1, y], cl[x + 1, y])
    gain = m.mux(x % 3, [m.u16(3), m.u16(4), m.u16(5)])
    out[x, y] = m.u16(m.lerp(v, toned, w)) * gain
    a = image((H, W), "u8", seed)
    return out, {"inp": (inp, a)}, {}, (W, H)


def wrapped_unrolled(m, W, H, seed=0):
    """A producer read through an in_() copy computed per row, an RDom unrolled, the copy stored per tile row
    and computed per row (folded storage)."""
    x, y, yo, yi = vars_(m, "x y yo yi")
    inp = m.ImageParam(ty(m, "i16"), 2, "inp")
    cl = m.BoundaryConditions.mirror_image(inp)
    p, out = m.Func("p"), m.Func("out")
    p[x, y] = m.i32(cl[x, y]) * 2 - m.i32(cl[x, y - 1])
    r = rdom(m, (-1, 3))
    out[x, y] = 0
    out[x, y] += p[x + r.x, y] * (r.x + 2) + p[x, y + r.x]
    out.split(y, yo, yi, 4, m.TailStrategy.GuardWithIf)
    out.update(0).split(y, yo, yi, 4, m.TailStrategy.GuardWithIf).unroll(r.x)
    p.compute_root()
    cp = p.in_()
    cp.store_at(out, yo).compute_at(out, yi)
    a = image((H, W), "i16", seed, -1000, 1000)
    return out, {"inp": (inp, a)}, {}, (W, H)


def param_where_argmin(m, W, H, seed=0, threshold=90):
    """Per row, the darkest pixel among those above a Param threshold (an argmin under RDom.where reading the
    Param), and how many pixels passed, as a Tuple output."""
    y = m.Var("y")
    inp = m.ImageParam(ty(m, "u8"), 2, "inp")
    t = m.Param(ty(m, "u8"), "t")
    r = rdom(m, (0, W))
    r.where(inp[r.x, y] > t)
    am = m.argmin(inp[r.x, y])
    cnt, out = m.Func("cnt"), m.Func("out")
    cnt[y] = 0
    cnt[y] += 1
    out[y] = (am[0], am[1], cnt[y])
    a = image((H, W), "u8", seed)
    return out, {"inp": (inp, a)}, {"t": (t, np.uint8(threshold))}, (H,)


def camera_like(m, W, H, seed=0):
    """A small camera pipe: black level and white balance on a u16 raw (Params), a 3x3 colour matrix on three
    planes, a gamma LUT built by a Func (pow) and applied by value; stages computed per tile, tiles in parallel,
    x vectorized."""
    x, y, c, xo, yo, xi, yi, v = vars_(m, "x y c xo yo xi yi v")
    raw = m.ImageParam(ty(m, "u16"), 3, "raw")
    black = m.Param(ty(m, "u16"), "black")
    cl = m.BoundaryConditions.repeat_edge(raw)
    lin, mat, curve, out = m.Func("lin"), m.Func("mat"), m.Func("curve"), m.Func("out")
    gains = [m.i32(5), m.i32(4), m.i32(6)]
    lin[x, y, c] = (m.i32(cl[x, y, c]) - m.i32(black)) * m.mux(c, gains) / 4
    k = [[3, -1, 0], [-1, 3, -1], [0, -1, 3]]
    mat[x, y, c] = m.clamp(m.select(c == 0, sum(k[0][j] * lin[x, y, j] for j in range(3)),
                                    c == 1, sum(k[1][j] * lin[x, y, j] for j in range(3)),
                                    sum(k[2][j] * lin[x, y, j] for j in range(3))) / 4, 0, 1023)
    curve[v] = m.u8(m.clamp(m.pow(m.f32(v) / 1023.0, 0.5) * 256.0, 0.0, 255.0))
    out[x, y, c] = curve[mat[x, y, c]]
    curve.compute_root()
    out.reorder(c, x, y).bound(c, 0, 3).tile(x, y, xo, yo, xi, yi, 8, 4, m.TailStrategy.GuardWithIf) \
        .parallel(yo).vectorize(xi, 4, m.TailStrategy.GuardWithIf)
    mat.compute_at(out, xo)
    lin.compute_at(out, xo)
    a = image((3, H, W), "u16", seed, 0, 1200)
    return out, {"raw": (raw, a)}, {"black": (black, np.uint16(64))}, (W, H, 3)


def random_index(r, depth=0) -> str:
    """An index of x through divisions, scales, min/max/clamp, remainders and offsets (``m``: lp or hl)."""
    if depth > 2 or r.random() < 0.25:
        return "x" if r.random() < 0.8 else f"(x + {r.randint(-3, 3)})"
    e = random_index(r, depth + 1)
    kind = r.choice(["div", "mul", "min", "max", "add", "clamp", "mod", "even"])
    return {"div": lambda: f"({e}) / {r.randint(2, 4)}", "mul": lambda: f"({e}) * {r.randint(2, 3)}",
            "min": lambda: f"m.min({e}, {r.randint(5, 30)})", "max": lambda: f"m.max({e}, {r.randint(0, 10)})",
            "add": lambda: f"({e}) + {r.randint(-3, 3)}",
            "clamp": lambda: f"m.clamp({e}, {r.randint(0, 5)}, {r.randint(10, 30)})",
            "mod": lambda: f"({e}) % {r.randint(2, 4)} + {random_index(r, depth + 1)}",
            "even": lambda: f"({e}) - ({e}) % 2"}[kind]()


PIPELINES = {
    "bilateral_grid": bilateral_grid,
    "bilateral_grid_tiles": lambda m, W, H, seed=0: bilateral_grid(m, W, H, seed, sched="tiles"),
    "tuple_min_max": tuple_min_max,
    "where_sums": where_sums,
    "inline_reductions": inline_reductions,
    "rfactor_sums": rfactor_sums,
    "fused_tiles": fused_tiles,
    **{f"split_{t}": (lambda t: lambda m, W, H, seed=0: split_tail(m, W, H, seed, tail=t))(t) for t in TAILS},
    **{f"boundary_{k}": (lambda k: lambda m, W, H, seed=0: boundary_blur(m, W, H, seed, kind=k))(k)
       for k in BOUNDARIES},
    "params_levels": params_levels,
    "float_exact": float_math,
    "float_approx": lambda m, W, H, seed=0: float_math(m, W, H, seed, which="approx"),
    "casts": casts,
    "separable_schedule": separable_schedule,
    "several_rdoms": several_rdoms,
    "pyramid_root": pyramid,
    "pyramid_tiles": lambda m, W, H, seed=0: pyramid(m, W, H, seed, sched="tiles"),
    "conv_relu_pool": conv_relu_pool,
    "conv_relu_pool_root": lambda m, W, H, seed=0: conv_relu_pool(m, W, H, seed, sched="root"),
    "histogram_equalize": histogram_equalize,
    "demosaic": demosaic,
    "depthwise_separable": depthwise_separable,
    "unsharp_float": unsharp_float,
    "lut_lerp": lut_lerp,
    "wrapped_unrolled": wrapped_unrolled,
    "param_where_argmin": param_where_argmin,
    "camera_like": camera_like,
}


def realize_with(m, name: str, W: int, H: int, seed: int = 0, builder=None):
    """The pipeline's output as numpy arrays (a list for a Tuple) realised by ``m`` (lp: loom's CPU path)."""
    out, inputs, params, size = (builder or PIPELINES[name])(m, W, H, seed)
    return realize_built(m, out, inputs, params, size)


def realize_built(m, out, inputs, params, size, strict_float: bool = False):
    """A built pipeline's output (see ``realize_with``); ``strict_float``: Halide compiles for this machine with
    StrictFloat."""
    if m is lp:
        import loom.jit  # noqa: F401  (Func.realize)
        given = {k: a for k, (_, a) in inputs.items()} | {k: v for k, (_, v) in params.items()}
        got = out.realize(list(size), given)
        return [np.asarray(b) for b in got] if isinstance(got, list) else np.asarray(got)
    for _, (p, a) in inputs.items():
        p.set(m.Buffer(a))
    for _, (p, v) in params.items():
        p.set(v.item() if isinstance(v, np.generic) else v)
    if strict_float:
        got = out.realize(list(size), m.get_jit_target_from_environment().with_feature(m.TargetFeature.StrictFloat))
    else:
        got = out.realize(list(size))
    if isinstance(got, (tuple, list)):  # a Tuple's Realization
        return [np.asarray(b) for b in got]
    return np.asarray(got)
