"""A second researcher's pipelines for the CPU path, each written once for loom and Halide (``m``), each with
several schedules: a float bilateral grid sliced trilinearly, a float local-Laplacian-style pyramid, a separable
Gaussian under eight schedules, a 3x3 median network, a Canny-like edge detector, an integral image, a matrix
multiply with rfactor, a bilinear resize by float Params, Tuple outputs, Euclidean division and bit operations,
u8 saturating arithmetic, Params of many types, every boundary condition on a 3-channel input, histogram
equalisation of a 12-bit image (rfactor-ed, interpolated LUT) and a GRBG demosaic into a Tuple.

A builder is ``build(m, W, H, seed, sched) -> (out, inputs, params, size)`` as in ``user_pipelines.py``;
``SCHEDULES[name]`` lists its schedules. Float pipelines set ``STRICT``: Halide realises them with the
``strict_float`` target feature (no fused multiply-adds, no reassociation), which is loom's float semantics.
"""

from __future__ import annotations

import numpy as np

import loom.frontends.pipeline as lp
from tests.pipelines_cpu.user_pipelines import image, rdom, realize_built, ty, vars_


def _tail(m, name):
    return getattr(m.TailStrategy, name)


# ---- a float bilateral grid ------------------------------------------------------------------------------------
def bilateral_f32(m, W, H, seed=0, sched="root"):
    """Chen et al.'s bilateral grid on f32 in [0, 1]: a histogram of (value, 1) per 4x4 block into 5 range bins
    (a float-computed, data-dependent z on the left of an RDom update), a 1-2-1 blur along z, x and y, then a
    trilinear slice at each pixel's (x / 4, y / 4, value * 4) and a normalisation."""
    s = 4
    x, y, z, c, xo, yo, xi, yi = vars_(m, "x y z c xo yo xi yi")
    inp = m.ImageParam(ty(m, "f32"), 2, "inp")
    cl = m.BoundaryConditions.repeat_edge(inp)
    grid, bz, bx, by, out = (m.Func(n) for n in ("grid", "bz", "bx", "by", "out"))
    r = rdom(m, (0, s), (0, s))
    v = m.clamp(cl[x * s + r.x - s // 2, y * s + r.y - s // 2], 0.0, 1.0)
    zi = m.i32(v * 4.0 + 0.5)
    grid[x, y, z, c] = m.f32(0)
    grid[x, y, zi, c] += m.select(c == 0, v, 1.0)
    bz[x, y, z, c] = grid[x, y, z - 1, c] + grid[x, y, z, c] * 2.0 + grid[x, y, z + 1, c]
    bx[x, y, z, c] = bz[x - 1, y, z, c] + bz[x, y, z, c] * 2.0 + bz[x + 1, y, z, c]
    by[x, y, z, c] = bx[x, y - 1, z, c] + bx[x, y, z, c] * 2.0 + bx[x, y + 1, z, c]
    val = m.clamp(inp[x, y], 0.0, 1.0) * 4.0
    zl = m.clamp(m.i32(m.floor(val)), 0, 3)
    zf = val - m.f32(zl)
    gx, gy = x / s, y / s
    fx, fy = m.f32(x % s) * 0.25, m.f32(y % s) * 0.25

    def lerp(a, b, w):
        return a * (1.0 - w) + b * w

    def at(cc):
        def zlerp(ix, iy):
            return lerp(by[ix, iy, zl, cc], by[ix, iy, zl + 1, cc], zf)
        return lerp(lerp(zlerp(gx, gy), zlerp(gx + 1, gy), fx), lerp(zlerp(gx, gy + 1), zlerp(gx + 1, gy + 1), fx), fy)
    out[x, y] = at(0) / m.max(at(1), 1e-3)
    if sched == "root":
        for f in (grid, bz, bx, by):
            f.compute_root()
    elif sched == "tiles":  # Halide's CPU schedule: the grid at the root, the blurs per 8x8 output tile
        grid.compute_root().update(0).parallel(y)
        out.tile(x, y, xo, yo, xi, yi, 8, 8, _tail(m, "GuardWithIf")).parallel(yo)
        by.compute_at(out, xo)
        bx.compute_at(out, xo)
        bz.compute_at(out, xo)
    else:  # "sliding": blurs stored at the root, computed per output row
        grid.compute_root()
        bz.compute_root()
        bx.store_root().compute_at(out, y)
        by.compute_at(out, y)
        out.vectorize(x, 4, _tail(m, "GuardWithIf"))
    a = image((H, W), "f32", seed, -0.1, 1.1)
    return out, {"inp": (inp, a)}, {}, (W, H)


# ---- a local-Laplacian-style float pyramid --------------------------------------------------------------------
def local_laplacian(m, W, H, seed=0, sched="root", K=4, J=3):
    """Paris et al.'s local Laplacian filter (Halide's app, smaller): K remapped copies of the image, their
    Gaussian and Laplacian pyramids over J levels, each output level interpolated between the two copies whose
    reference intensity brackets the input's own Gaussian level (a data-dependent index into k), collapsed."""
    x, y, k, xo, yo, xi, yi = vars_(m, "x y k xo yo xi yi")
    inp = m.ImageParam(ty(m, "f32"), 2, "inp")
    cl = m.BoundaryConditions.mirror_interior(inp)
    gray = m.Func("gray")
    gray[x, y] = m.clamp(cl[x, y], 0.0, 1.0)
    proc = m.Func("proc")
    d = gray[x, y] - m.f32(k) * (1.0 / (K - 1))
    proc[x, y, k] = gray[x, y] + d * 0.5 / (1.0 + d * d * 8.0) - d * 0.25

    def down(f, name, three):
        dx, g = m.Func(name + "_dx"), m.Func(name)
        if three:
            dx[x, y, k] = f[2 * x - 1, y, k] + f[2 * x, y, k] * 3.0 + f[2 * x + 1, y, k] * 3.0 + f[2 * x + 2, y, k]
            g[x, y, k] = (dx[x, 2 * y - 1, k] + dx[x, 2 * y, k] * 3.0 + dx[x, 2 * y + 1, k] * 3.0
                          + dx[x, 2 * y + 2, k]) * (1.0 / 64)
        else:
            dx[x, y] = f[2 * x - 1, y] + f[2 * x, y] * 3.0 + f[2 * x + 1, y] * 3.0 + f[2 * x + 2, y]
            g[x, y] = (dx[x, 2 * y - 1] + dx[x, 2 * y] * 3.0 + dx[x, 2 * y + 1] * 3.0 + dx[x, 2 * y + 2]) * (1.0 / 64)
        return g, dx

    def up(f, name, three):
        g = m.Func(name)
        if three:
            g[x, y, k] = (f[x / 2, y / 2, k] * 3.0 + f[(x + 1) / 2, (y + 1) / 2, k]) * 0.25
        else:
            g[x, y] = (f[x / 2, y / 2] * 3.0 + f[(x + 1) / 2, (y + 1) / 2]) * 0.25
        return g

    gp, ip, lp_, helpers = [proc], [gray], [], []
    for j in range(1, J):
        g, dx = down(gp[-1], f"gp{j}", True)
        gi, dxi = down(ip[-1], f"ip{j}", False)
        gp.append(g)
        ip.append(gi)
        helpers += [dx, dxi]
    for j in range(J - 1):
        u = up(gp[j + 1], f"gu{j}", True)
        lj = m.Func(f"lp{j}")
        lj[x, y, k] = gp[j][x, y, k] - u[x, y, k]
        lp_.append(lj)
    lp_.append(gp[J - 1])
    outl = []
    for j in range(J):
        level = ip[j][x, y] * (K - 1)
        li = m.clamp(m.i32(level), 0, K - 2)
        lf = level - m.f32(li)
        o = m.Func(f"ol{j}")
        o[x, y] = lp_[j][x, y, li] * (1.0 - lf) + lp_[j][x, y, li + 1] * lf
        outl.append(o)
    acc = outl[J - 1]
    for j in range(J - 2, -1, -1):
        u = up(acc, f"ou{j}", False)
        c = m.Func(f"col{j}")
        c[x, y] = u[x, y] + outl[j][x, y]
        acc = c
    out = m.Func("out")
    out[x, y] = m.clamp(acc[x, y], 0.0, 1.0)
    if sched == "root":
        for f in gp[1:] + ip[1:] + lp_[:-1] + outl + helpers + [proc, gray]:
            f.compute_root()
    else:  # "tiles": the big levels per tile of the output, the small ones at the root, k innermost unrolled
        out.tile(x, y, xo, yo, xi, yi, 16, 8, _tail(m, "GuardWithIf")).parallel(yo)
        for f in gp[1:] + ip[1:] + outl[1:]:
            f.compute_root()
        proc.compute_root().reorder(k, x, y).unroll(k)
        lp_[0].compute_at(out, xo)
        outl[0].compute_at(out, xo)
    a = image((H, W), "f32", seed, 0.0, 1.0)
    return out, {"inp": (inp, a)}, {}, (W, H)


# ---- a separable Gaussian under eight schedules ----------------------------------------------------------------
GAUSS_SCHEDULES = ["inline", "root", "tile_vec", "sliding", "store_at", "unroll_reorder", "fuse_parallel",
                   "split_producer"]


def gauss_separable(m, W, H, seed=0, sched="root"):
    """A 1-4-6-4-1 Gaussian of a u16 image, horizontal pass then vertical, rounded back to u16."""
    x, y, xo, yo, xi, yi, t, px, pi = vars_(m, "x y xo yo xi yi t px pi")
    inp = m.ImageParam(ty(m, "u16"), 2, "inp")
    cl = m.BoundaryConditions.repeat_edge(inp)
    bx, out = m.Func("bx"), m.Func("out")
    bx[x, y] = (m.u32(cl[x - 2, y]) + m.u32(cl[x - 1, y]) * 4 + m.u32(cl[x, y]) * 6 + m.u32(cl[x + 1, y]) * 4
                + m.u32(cl[x + 2, y]))
    out[x, y] = m.u16((bx[x, y - 2] + bx[x, y - 1] * 4 + bx[x, y] * 6 + bx[x, y + 1] * 4 + bx[x, y + 2] + 128) >> 8)
    if callable(sched):  # a random schedule (researcher_fuzz.py)
        sched(m, out, {"bx": bx})
    elif sched == "root":
        bx.compute_root()
    elif sched == "tile_vec":
        out.tile(x, y, xo, yo, xi, yi, 16, 8).vectorize(xi, 8)
        bx.compute_at(out, xo).vectorize(x, 8)
    elif sched == "sliding":
        bx.store_root().compute_at(out, y)
    elif sched == "store_at":
        out.split(y, yo, yi, 4, _tail(m, "GuardWithIf")).parallel(yo)
        bx.store_at(out, yo).compute_at(out, yi)
    elif sched == "unroll_reorder":
        out.split(x, xo, xi, 4, _tail(m, "GuardWithIf")).unroll(xi).reorder(xi, y, xo)
        bx.compute_at(out, xo).split(x, px, pi, 3, _tail(m, "RoundUp")).unroll(pi)
    elif sched == "fuse_parallel":
        out.tile(x, y, xo, yo, xi, yi, 5, 3, _tail(m, "ShiftInwards")).fuse(xo, yo, t).parallel(t)
        bx.compute_at(out, t)
    elif sched == "split_producer":
        bx.compute_root().split(y, yo, yi, 7, _tail(m, "GuardWithIf")).reorder(x, yi, yo).parallel(yo) \
            .vectorize(x, 4, _tail(m, "GuardWithIf"))
        out.split(x, xo, xi, 6, _tail(m, "GuardWithIf")).reorder(xi, xo, y)
    a = image((H, W), "u16", seed)
    return out, {"inp": (inp, a)}, {}, (W, H)


# ---- a 3x3 median by a min/max network --------------------------------------------------------------------------
def median3x3(m, W, H, seed=0, sched="inline"):
    """Each column of three sorted (min, mid, max), then the median of the three columns' maxima' min, mids'
    median and minima's max (Paeth's network), u8, through mirror_image."""
    x, y, xo, yo, xi, yi = vars_(m, "x y xo yo xi yi")
    inp = m.ImageParam(ty(m, "u8"), 2, "inp")
    cl = m.BoundaryConditions.mirror_image(inp)
    lo, mid, hi, out = m.Func("lo"), m.Func("mid"), m.Func("hi"), m.Func("out")
    a, b, c = cl[x, y - 1], cl[x, y], cl[x, y + 1]
    lo[x, y] = m.min(a, m.min(b, c))
    hi[x, y] = m.max(a, m.max(b, c))
    mid[x, y] = m.max(m.min(a, b), m.min(m.max(a, b), c))
    mx = m.max(lo[x - 1, y], m.max(lo[x, y], lo[x + 1, y]))
    mn = m.min(hi[x - 1, y], m.min(hi[x, y], hi[x + 1, y]))
    p, q, r = mid[x - 1, y], mid[x, y], mid[x + 1, y]
    md = m.max(m.min(p, q), m.min(m.max(p, q), r))
    out[x, y] = m.max(m.min(mx, md), m.min(m.max(mx, md), mn))
    if callable(sched):
        sched(m, out, {"lo": lo, "mid": mid, "hi": hi})
    elif sched == "root":
        for f in (lo, mid, hi):
            f.compute_root()
    elif sched == "tiles":
        out.tile(x, y, xo, yo, xi, yi, 8, 4, _tail(m, "GuardWithIf")).vectorize(xi, 8)
        for f in (lo, mid, hi):
            f.compute_at(out, xo)
    img = image((H, W), "u8", seed)
    return out, {"inp": (inp, img)}, {}, (W, H)


# ---- a Canny-like edge detector -------------------------------------------------------------------------------
def canny_like(m, W, H, seed=0, sched="root"):
    """A 3x3 f32 blur, Sobel gradients, magnitude, direction quantised from atan2 into four sectors by select,
    non-maximum suppression along the sector, and a double threshold (255 strong, 128 weak, 0) as u8."""
    x, y, xo, yo, xi, yi = vars_(m, "x y xo yo xi yi")
    inp = m.ImageParam(ty(m, "u8"), 2, "inp")
    cl = m.BoundaryConditions.repeat_edge(inp)
    blur, gx, gy, mag, sector, out = (m.Func(n) for n in ("blur", "gx", "gy", "mag", "sector", "out"))
    blur[x, y] = (m.f32(cl[x - 1, y - 1]) + m.f32(cl[x, y - 1]) * 2.0 + m.f32(cl[x + 1, y - 1])
                  + m.f32(cl[x - 1, y]) * 2.0 + m.f32(cl[x, y]) * 4.0 + m.f32(cl[x + 1, y]) * 2.0
                  + m.f32(cl[x - 1, y + 1]) + m.f32(cl[x, y + 1]) * 2.0 + m.f32(cl[x + 1, y + 1])) * 0.0625
    gx[x, y] = (blur[x + 1, y - 1] - blur[x - 1, y - 1]) + (blur[x + 1, y] - blur[x - 1, y]) * 2.0 \
        + (blur[x + 1, y + 1] - blur[x - 1, y + 1])
    gy[x, y] = (blur[x - 1, y + 1] - blur[x - 1, y - 1]) + (blur[x, y + 1] - blur[x, y - 1]) * 2.0 \
        + (blur[x + 1, y + 1] - blur[x + 1, y - 1])
    mag[x, y] = m.sqrt(gx[x, y] * gx[x, y] + gy[x, y] * gy[x, y])
    ang = m.atan2(gy[x, y], gx[x, y]) * (4.0 / 3.14159265)  # in [-4, 4]
    a = m.select(ang < 0.0, ang + 4.0, ang)
    sector[x, y] = m.select(a < 0.5, 0, a < 1.5, 1, a < 2.5, 2, a < 3.5, 3, 0)
    s = sector[x, y]
    dx = m.select(s == 0, 1, s == 1, 1, s == 2, 0, -1)
    dy = m.select(s == 0, 0, 1)
    mg = mag[x, y]
    keep = (mg >= mag[x + dx, y + dy]) & (mg > mag[x - dx, y - dy])
    out[x, y] = m.select(keep & (mg > 60.0), m.u8(255), keep & (mg > 20.0), m.u8(128), m.u8(0))
    if callable(sched):
        sched(m, out, {"blur": blur, "gx": gx, "gy": gy, "mag": mag, "sector": sector})
    elif sched == "root":
        for f in (blur, gx, gy, mag, sector):
            f.compute_root()
    elif sched == "tiles":
        out.tile(x, y, xo, yo, xi, yi, 8, 8, _tail(m, "GuardWithIf"))
        blur.compute_at(out, xo)
        mag.compute_at(out, xo)
        sector.compute_at(out, xo)
    else:  # "rows": sliding windows down the image
        blur.store_root().compute_at(out, y)
        mag.store_root().compute_at(out, y)
    img = image((H, W), "u8", seed)
    return out, {"inp": (inp, img)}, {}, (W, H)


# ---- an integral image and box filter -------------------------------------------------------------------------
def integral_box(m, W, H, seed=0, sched="root"):
    """A summed-area table by two scans (an RDom along x, then one along y), then a 5x5 box mean read at its
    four clamped corners."""
    x, y, xo, xi = vars_(m, "x y xo xi")
    inp = m.ImageParam(ty(m, "u8"), 2, "inp")
    ii, out = m.Func("ii"), m.Func("out")
    rx, ry = rdom(m, (1, W - 1)) if W > 1 else None, rdom(m, (1, H - 1)) if H > 1 else None
    ii[x, y] = m.u32(inp[x, y])
    if rx is not None:
        ii[rx.x, y] = ii[rx.x, y] + ii[rx.x - 1, y]
    if ry is not None:
        ii[x, ry.x] = ii[x, ry.x] + ii[x, ry.x - 1]

    def at(i, j):  # the table at a corner, -1 reading as 0
        return m.select((i < 0) | (j < 0), m.u32(0), ii[m.clamp(i, 0, W - 1), m.clamp(j, 0, H - 1)])
    x0, x1, y0, y1 = m.max(x - 3, -1), m.min(x + 2, W - 1), m.max(y - 3, -1), m.min(y + 2, H - 1)
    total = at(x1, y1) - at(x0, y1) - at(x1, y0) + at(x0, y0)
    out[x, y] = m.u8(total / m.u32((x1 - x0) * (y1 - y0)))
    ii.compute_root()
    if sched == "parallel" and rx is not None and ry is not None:
        ii.update(0).parallel(y)
        ii.update(1).split(x, xo, xi, 4, _tail(m, "GuardWithIf")).parallel(xo)
        out.parallel(y).vectorize(x, 4, _tail(m, "GuardWithIf"))
    img = image((H, W), "u8", seed)
    return out, {"inp": (inp, img)}, {}, (W, H)


# ---- a matrix multiply with rfactor ---------------------------------------------------------------------------
def matmul(m, W, H, seed=0, sched="plain", K=24):
    """C[i, j] = sum_k A[k, j] * B[i, k], i16 operands into i32; k as a 2-D RDom (k = 6 r.y + r.x) so that
    ``rfactor`` can split the sum over r.y (loom refuses rfactor of a split RVar)."""
    i, j, u, io, jo, ii_, ji = vars_(m, "i j u io jo ii ji")
    A = m.ImageParam(ty(m, "i16"), 2, "A")
    B = m.ImageParam(ty(m, "i16"), 2, "B")
    C = m.Func("C")
    r = rdom(m, (0, 6), (0, K // 6))
    kk = r.y * 6 + r.x
    C[i, j] = m.i32(0)
    C[i, j] += m.i32(A[kk, j]) * m.i32(B[i, kk])
    if sched == "rfactor":
        inter = C.update(0).rfactor(r.y, u)
        inter.compute_root().update(0).parallel(u)
    elif sched == "tiled":
        C.tile(i, j, io, jo, ii_, ji, 4, 4, _tail(m, "GuardWithIf"))
        C.update(0).tile(i, j, io, jo, ii_, ji, 4, 4, _tail(m, "GuardWithIf")).reorder(ii_, ji, r.x, r.y, io, jo) \
            .parallel(jo)
    a = image((H, K), "i16", seed)
    b = image((K, W), "i16", seed + 1)
    return C, {"A": (A, a), "B": (B, b)}, {}, (W, H)


# ---- a bilinear resize by float Params ----------------------------------------------------------------------
def resize_bilinear(m, W, H, seed=0, sched="root", in_w=None, in_h=None):
    """Resize a u8 image of ``in_w x in_h`` to W x H: source coordinates ``(x + 0.5) * sx - 0.5`` (f32 Params),
    clamped to the image, a horizontal pass then a vertical one, rounded and saturated back to u8."""
    x, y, xo, yo, xi, yi = vars_(m, "x y xo yo xi yi")
    in_w, in_h = in_w or max(1, (W * 2 + 2) // 3), in_h or max(1, (H * 3 + 1) // 4)
    inp = m.ImageParam(ty(m, "u8"), 2, "inp")
    sx, sy = m.Param(ty(m, "f32"), "sx"), m.Param(ty(m, "f32"), "sy")
    hz, out = m.Func("hz"), m.Func("out")
    fx = m.clamp((m.f32(x) + 0.5) * sx - 0.5, 0.0, float(in_w - 1))
    x0 = m.i32(m.floor(fx))
    x1 = m.min(x0 + 1, in_w - 1)
    wx = fx - m.floor(fx)
    hz[x, y] = m.f32(inp[x0, y]) * (1.0 - wx) + m.f32(inp[x1, y]) * wx
    fy = m.clamp((m.f32(y) + 0.5) * sy - 0.5, 0.0, float(in_h - 1))
    y0 = m.i32(m.floor(fy))
    y1 = m.min(y0 + 1, in_h - 1)
    wy = fy - m.floor(fy)
    out[x, y] = m.saturating_cast(ty(m, "u8"), m.round(hz[x, y0] * (1.0 - wy) + hz[x, y1] * wy))
    if callable(sched):
        sched(m, out, {"hz": hz})
    elif sched == "root":
        hz.compute_root()
    elif sched == "tiles":
        out.tile(x, y, xo, yo, xi, yi, 8, 4, _tail(m, "GuardWithIf")).vectorize(xi, 4).parallel(yo)
        hz.compute_at(out, xo)
    img = image((in_h, in_w), "u8", seed)
    return out, {"inp": (inp, img)}, {"sx": (sx, np.float32(in_w / W)), "sy": (sy, np.float32(in_h / H))}, (W, H)


# ---- Tuple outputs ------------------------------------------------------------------------------------------
def tuple_gradient(m, W, H, seed=0, sched="root"):
    """A Tuple-valued Sobel (gx, gy) in i16, and a Tuple output: the L1 magnitude as u16 and an i8 octant code
    from the signs and the larger component."""
    x, y, xo, yo, xi, yi = vars_(m, "x y xo yo xi yi")
    inp = m.ImageParam(ty(m, "u8"), 2, "inp")
    cl = m.BoundaryConditions.mirror_interior(inp)
    g, out = m.Func("g"), m.Func("out")

    def px(i, j):
        return m.i16(cl[x + i, y + j])
    g[x, y] = (px(1, -1) + px(1, 0) * 2 + px(1, 1) - px(-1, -1) - px(-1, 0) * 2 - px(-1, 1),
               px(-1, 1) + px(0, 1) * 2 + px(1, 1) - px(-1, -1) - px(0, -1) * 2 - px(1, -1))
    gx, gy = g[x, y][0], g[x, y][1]
    octant = m.i8(m.select(gx < 0, 4, 0) + m.select(gy < 0, 2, 0) + m.select(m.abs(gx) < m.abs(gy), 1, 0))
    out[x, y] = (m.u16(m.abs(gx)) + m.u16(m.abs(gy)), octant)
    if sched == "root":
        g.compute_root()
    elif sched == "tiles":
        out.tile(x, y, xo, yo, xi, yi, 4, 4, _tail(m, "GuardWithIf"))
    img = image((H, W), "u8", seed)
    return out, {"inp": (inp, img)}, {}, (W, H)


# ---- Euclidean division, shifts and bit operations ------------------------------------------------------------
def int_arith(m, W, H, seed=0, sched="inline", kind="i32"):
    """Division and modulo of negative values (Halide's Euclidean semantics: the remainder is never negative,
    x / 0 is 0, INT_MIN / -1 wraps) by data, by negative constants (``cast(u16, -3)`` wraps to 65533, as in
    Halide) and by a Param; arithmetic and logical shifts by data and by a Param; and, or, xor, not; all in
    ``kind``, mixed with wrap-around into i32."""
    x, y, xo, xi = vars_(m, "x y xo xi")
    a_in = m.ImageParam(ty(m, kind), 2, "a")
    b_in = m.ImageParam(ty(m, kind), 2, "b")
    p = m.Param(ty(m, kind), "p")
    out = m.Func("out")
    a, b = a_in[x, y], b_in[x, y]
    t = ty(m, kind)
    bits = {"i8": 8, "i16": 16, "i32": 32, "u8": 8, "u16": 16, "u32": 32}[kind]
    sh = b & m.cast(t, bits - 1)
    # a Param amount in [-4, 3] when signed (a negative amount shifts the other way); past the width Halide's
    # shifts are undefined (its scalar and vector code differ), loom's give 0 or the sign
    psh = (p & m.cast(t, 7)) - m.cast(t, 4) if kind.startswith("i") else p & m.cast(t, 7)
    terms = [a / b, a % b, a / m.cast(t, -3), a % m.cast(t, -3), a / m.cast(t, 7), a % m.cast(t, 7), a / p, a % p,
             a >> sh, a << sh, a >> psh, a << psh, (a & b) ^ (~a | p), m.cast(t, a * b - p)]
    acc = m.i32(0)
    for n, e in enumerate(terms):
        acc = acc * 3 + m.i32(e) + n
    out[x, y] = acc
    if sched == "vector":
        out.vectorize(x, 8, _tail(m, "GuardWithIf")).parallel(y)
    elif sched == "split":
        out.split(x, xo, xi, 3, _tail(m, "ShiftInwards")).unroll(xi)
    av = image((H, W), kind, seed)
    bv = image((H, W), kind, seed + 1)
    bv.flat[::5] = 0  # division by zero
    if kind.startswith("i"):
        info = np.iinfo(av.dtype)
        av.flat[::7] = info.min
        bv.flat[3::11] = -1  # INT_MIN / -1
    pv = {"i8": -5, "i16": -300, "i32": -70001, "u8": 6, "u16": 300, "u32": 70001}[kind]
    return out, {"a": (a_in, av), "b": (b_in, bv)}, {"p": (p, np.dtype(av.dtype).type(pv))}, (W, H)


# ---- u8 saturating arithmetic -----------------------------------------------------------------------------
def u8_blend(m, W, H, seed=0, sched="inline"):
    """Alpha blending of two u8 images by a u8 mask with Halide's rounded division by 255 in u16, a saturating
    add of a brightness, a wrapped u8 difference, absd, saturating_sub and a saturating cast of an i16 sum."""
    x, y, c, xo, xi = vars_(m, "x y c xo xi")
    fg = m.ImageParam(ty(m, "u8"), 3, "fg")
    bg = m.ImageParam(ty(m, "u8"), 3, "bg")
    al = m.ImageParam(ty(m, "u8"), 2, "alpha")
    out = m.Func("out")
    f, b, w = m.u16(fg[x, y, c]), m.u16(bg[x, y, c]), m.u16(al[x, y])
    mix = f * w + b * (m.u16(255) - w) + m.u16(127)
    blended = m.u8((mix + (mix >> 8)) >> 8)
    bright = m.saturating_add(blended, m.u8(40))
    wrapped = m.u8(fg[x, y, c] - bg[x, y, c])
    diff = m.absd(fg[x, y, c], bg[x, y, c])
    low = m.saturating_sub(bg[x, y, c], m.u8(200))
    sat = m.saturating_cast(ty(m, "u8"), m.i16(fg[x, y, c]) - m.i16(bg[x, y, c]) * 2 + m.i16(100))
    out[x, y, c] = m.u32(bright) + (m.u32(wrapped) << 8) + (m.u32(diff) << 16) + (m.u32(low ^ sat) << 24)
    if sched == "vector":
        out.reorder(c, x, y).vectorize(x, 16, _tail(m, "GuardWithIf")).parallel(y)
    elif sched == "split":
        out.split(x, xo, xi, 7, _tail(m, "RoundUp")).reorder(xi, c, xo, y)
    shape = (3, H, W)
    fgv, bgv, alv = image(shape, "u8", seed), image(shape, "u8", seed + 1), image((H, W), "u8", seed + 2)
    if sched == "split":  # RoundUp: the inputs hold the rounded-up columns
        pad = -W % 7
        fgv, bgv = (np.pad(v, ((0, 0), (0, 0), (0, pad)), mode="edge") for v in (fgv, bgv))
        alv = np.pad(alv, ((0, 0), (0, pad)), mode="edge")
    return out, {"fg": (fg, fgv), "bg": (bg, bgv), "alpha": (al, alv)}, {}, (W, H, 3)


# ---- Params of several types ---------------------------------------------------------------------------------
def many_params(m, W, H, seed=0, sched="inline"):
    """Params of eight types: an i8 offset, a u16 gain, an i32 index shift (ranged), an f32 and an f64 weight,
    a u8 exterior value (constant_exterior), a bool switch and a u32 mask."""
    x, y, yo, yi = vars_(m, "x y yo yi")
    inp = m.ImageParam(ty(m, "u8"), 2, "inp")
    off, gain, shift = m.Param(ty(m, "i8"), "off"), m.Param(ty(m, "u16"), "gain"), m.Param(ty(m, "i32"), "shift")
    wf = m.Param(ty(m, "f32"), "wf")
    wd = m.Param(lp.Float64 if m is lp else m.Float(64), "wd")
    ext = m.Param(ty(m, "u8"), "ext")
    flip = m.Param(lp.Bool if m is lp else m.Bool(), "flip")
    mask = m.Param(ty(m, "u32"), "mask")
    if m is lp:
        shift.set_range(-2, 2)
    cl = m.BoundaryConditions.constant_exterior(inp, ext)
    out = m.Func("out")
    v = cl[x + shift, y]
    lin = m.i32(v) + m.i32(off) * m.i32(gain)
    fl = m.i32(m.round(m.f32(v) * wf)) + m.i32(m.f64(v) * wd)
    out[x, y] = m.select(flip, lin, fl) + m.i32(m.u32(v) & mask)
    if sched == "parallel":
        out.split(y, yo, yi, 3, _tail(m, "GuardWithIf")).parallel(yo)
    img = image((H, W), "u8", seed)
    params = {"off": (off, np.int8(-7)), "gain": (gain, np.uint16(300)), "shift": (shift, np.int32(-1)),
              "wf": (wf, np.float32(0.75)), "wd": (wd, np.float64(1.0 / 3.0)), "ext": (ext, np.uint8(9)),
              "flip": (flip, np.bool_(sched == "parallel")), "mask": (mask, np.uint32(0x5A))}
    return out, {"inp": (inp, img)}, params, (W, H)


# ---- every boundary condition on a 3-channel input ------------------------------------------------------------
def boundaries_3d(m, W, H, seed=0, sched="root", in_shape=None):
    """The four boundary conditions on a (3, h, w) i16 input bounded in x and y only (c passes through), each read
    by a 7x3 window reaching three pixels past every edge; their sum with per-kind weights."""
    x, y, c, xo, xi = vars_(m, "x y c xo xi")
    h, w = in_shape or (H, W)
    inp = m.ImageParam(ty(m, "i16"), 3, "inp")
    bc = m.BoundaryConditions
    bounds = [(0, w), (0, h)]
    kinds = [bc.repeat_edge(inp, bounds), bc.constant_exterior(inp, -5, bounds), bc.mirror_image(inp, bounds),
             bc.mirror_interior(inp, bounds)]
    out = m.Func("out")
    acc = m.i32(0)
    for n, k in enumerate(kinds):
        for dx in (-3, 0, 3):
            for dy in (-1, 1):
                acc = acc + m.i32(k[x + dx, y + dy, c]) * (n + 1)
    out[x, y, c] = acc
    out.bound(c, 0, 3)
    if sched == "tiles":
        out.reorder(c, x, y).split(x, xo, xi, 4, _tail(m, "GuardWithIf")).unroll(c)
    img = image((3, h, w), "i16", seed, -1000, 1000)
    return out, {"inp": (inp, img)}, {}, (W, H, 3)


# ---- histogram equalisation of a 12-bit image -----------------------------------------------------------------
def hist_eq_u16(m, W, H, seed=0, sched="root", bins=64):
    """A 64-bin histogram of a 12-bit u16 image (an RDom over the image, a data-dependent bin), its cumulative
    sum by an RDom scan, a u8 LUT from it, and each pixel's LUT entry interpolated between its bin's two ends."""
    x, y, i, u = vars_(m, "x y i u")
    inp = m.ImageParam(ty(m, "u16"), 2, "inp")
    hist, cdf, lut, out = m.Func("hist"), m.Func("cdf"), m.Func("lut"), m.Func("out")
    r = rdom(m, (0, W), (0, H))
    hist[i] = m.u32(0)
    hist[m.i32(inp[r.x, r.y] >> 6)] += m.u32(1)
    s = rdom(m, (1, bins - 1))
    cdf[i] = hist[i]
    cdf[s.x] = cdf[s.x - 1] + hist[s.x]
    lut[i] = m.u8(m.select(i < 0, m.u32(0), cdf[m.clamp(i, 0, bins - 1)] * 255 / m.u32(W * H)))
    v = inp[x, y]
    b = m.i32(v >> 6)
    frac = m.u16(v & m.u16(63))
    lo, hi = m.u16(lut[b - 1]), m.u16(lut[b])
    out[x, y] = m.u8((lo * (m.u16(64) - frac) + hi * frac + m.u16(32)) >> 6)
    cdf.compute_root()
    lut.compute_root()
    if sched == "root":
        hist.compute_root()
    else:  # "rfactor": per-row-block histograms in parallel, merged
        hist.compute_root()
        inter = hist.update(0).rfactor(r.y, u)
        inter.compute_root().update(0).parallel(u)
        out.parallel(y).vectorize(x, 8, _tail(m, "GuardWithIf"))
    a = image((H, W), "u16", seed, 0, 4095)
    return out, {"inp": (inp, a)}, {}, (W, H)


# ---- a GRBG demosaic into a Tuple ------------------------------------------------------------------------------
def demosaic_tuple(m, W, H, seed=0, sched="root"):
    """A GRBG Bayer mosaic (green where x + y is even) to an (r, g, b) Tuple of u8, by x % 2 and y % 2 selects
    over mirror_interior neighbours, the green plane interpolated first by gradients (the smaller of the
    horizontal and vertical differences chooses the direction)."""
    x, y, xo, yo, xi, yi = vars_(m, "x y xo yo xi yi")
    inp = m.ImageParam(ty(m, "u8"), 2, "inp")
    cl = m.BoundaryConditions.mirror_interior(inp)
    g, out = m.Func("g"), m.Func("out")

    def p(i, j):
        return m.i16(cl[x + i, y + j])
    green_here = (x + y) % 2 == 0
    dh, dv = m.absd(p(-1, 0), p(1, 0)), m.absd(p(0, -1), p(0, 1))
    interp = m.select(dh < dv, (p(-1, 0) + p(1, 0) + 1) / 2, dh > dv, (p(0, -1) + p(0, 1) + 1) / 2,
                      (p(-1, 0) + p(1, 0) + p(0, -1) + p(0, 1) + 2) / 4)
    g[x, y] = m.select(green_here, p(0, 0), interp)
    red_row = y % 2 == 0  # GRBG: red on even rows at odd x
    own = p(0, 0)
    horiz = (p(-1, 0) + p(1, 0) + 1) / 2
    vert = (p(0, -1) + p(0, 1) + 1) / 2
    diag = (p(-1, -1) + p(1, -1) + p(-1, 1) + p(1, 1) + 2) / 4
    red = m.select(green_here, m.select(red_row, horiz, vert), red_row, own, diag)
    blue = m.select(green_here, m.select(red_row, vert, horiz), red_row, diag, own)
    out[x, y] = (m.u8(m.clamp(red, 0, 255)), m.u8(g[x, y]), m.u8(m.clamp(blue, 0, 255)))
    if sched == "root":
        g.compute_root()
    else:  # "tiles": g per 6x4 tile, the tile's x unrolled by 2 (the mosaic's period); loom computes g at the loop
        # of the element that reads it (a Tuple's elements have loop nests of their own: docs/pipelines.md)
        out.tile(x, y, xo, yo, xi, yi, 6, 4, _tail(m, "GuardWithIf")).unroll(xi, 2)
        g.compute_at(out.components[1] if m is lp else out, xo)
    a = image((H, W), "u8", seed)
    return out, {"inp": (inp, a)}, {}, (W, H)


PIPELINES = {
    "bilateral_f32": (bilateral_f32, ["root", "tiles", "sliding"]),
    "local_laplacian": (local_laplacian, ["root", "tiles"]),
    "gauss_separable": (gauss_separable, GAUSS_SCHEDULES),
    "median3x3": (median3x3, ["inline", "root", "tiles"]),
    "canny_like": (canny_like, ["root", "tiles", "rows"]),
    "integral_box": (integral_box, ["root", "parallel"]),
    "matmul": (matmul, ["plain", "rfactor", "tiled"]),
    "resize_bilinear": (resize_bilinear, ["root", "tiles"]),
    "tuple_gradient": (tuple_gradient, ["root", "tiles"]),
    "int_arith_i32": (lambda m, W, H, seed=0, sched="inline": int_arith(m, W, H, seed, sched, "i32"),
                      ["inline", "vector", "split"]),
    "int_arith_i8": (lambda m, W, H, seed=0, sched="inline": int_arith(m, W, H, seed, sched, "i8"),
                     ["inline", "vector"]),
    "int_arith_u16": (lambda m, W, H, seed=0, sched="inline": int_arith(m, W, H, seed, sched, "u16"),
                      ["inline", "split"]),
    "u8_blend": (u8_blend, ["inline", "vector", "split"]),
    "many_params": (many_params, ["inline", "parallel"]),
    "boundaries_3d": (boundaries_3d, ["root", "tiles"]),
    "hist_eq_u16": (hist_eq_u16, ["root", "rfactor"]),
    "demosaic_tuple": (demosaic_tuple, ["root", "tiles"]),
}
FLOAT = {"bilateral_f32", "local_laplacian", "canny_like", "resize_bilinear"}


def realize(m, name: str, W: int, H: int, sched: str, seed: int = 0):
    """The output (a list for a Tuple) realised by ``m``; Halide's float pipelines with strict_float."""
    out, inputs, params, size = PIPELINES[name][0](m, W, H, seed, sched)
    return realize_built(m, out, inputs, params, size, strict_float=name in FLOAT)
