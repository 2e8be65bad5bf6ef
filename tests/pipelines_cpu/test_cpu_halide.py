"""Real Halide (PyPI ``halide``, optional test extra) as an independent oracle for the CPU path.

Each app is written here in Halide's own Python API from its description (Halide's type rules:
narrow integers wrap, integer division floors) and JIT-compiled by Halide; loom's C output must
equal it bit for bit. ``hl.Buffer(ndarray)`` maps numpy (H, W) to x = W, y = H and
``np.asarray(func.realize([W, H]))`` gives (H, W) back, the same layout as loom.
"""

import os

import numpy as np
import pytest
from tests.pipelines_cpu.cpu_apps import example, output_size, random_inputs, references

from loom.jit.pipeline import compile_cpu

if "libasan" in os.environ.get("LD_PRELOAD", ""):  # the sanitizer session
    pytest.skip("Halide throws C++ exceptions internally, which a preloaded ASan runtime cannot intercept; "
                "loom's C for these apps runs under ASan in test_cpu_apps", allow_module_level=True)
if os.environ.get("CI"):  # CI installs the halide extra: the oracle must really run there
    import halide as hl
else:
    hl = pytest.importorskip("halide")

x, y, c = hl.Var("x"), hl.Var("y"), hl.Var("c")


def _stencil(f, weights, cast):
    """sum of weights[dy][dx] * f(x + dx, y + dy), each weight cast to the accumulator type."""
    acc = None
    for dy, row in enumerate(weights):
        for dx, wgt in enumerate(row):
            if wgt:
                term = cast(wgt) * f[x + dx, y + dy]
                acc = term if acc is None else acc + term
    return acc


def halide_pointwise(inp):
    out = hl.Func("out")
    out[x, y] = hl.u8(hl.min((hl.u16(inp[x, y]) * 3) >> 1, 255))
    return out


def halide_gaussian(inp):
    hw = hl.Func("hw")
    hw[x, y] = hl.u16(inp[x, y])
    out = hl.Func("out")
    out[x, y] = hl.u8(_stencil(hw, [[24, 30, 24], [30, 37, 30], [24, 30, 24]], hl.u16) / 256)
    return out


def halide_cascade(inp):
    hw = hl.Func("hw")
    hw[x, y] = hl.u16(inp[x, y])
    k = [[1, 2, 1], [2, 4, 2], [1, 2, 1]]
    c1 = hl.Func("c1")
    c1[x, y] = _stencil(hw, k, hl.u16) / 16
    out = hl.Func("out")
    out[x, y] = hl.u8(_stencil(c1, k, hl.u16) / 16)
    c1.compute_root()
    return out


def halide_harris(inp):
    hw = hl.Func("hw")
    hw[x, y] = hl.i16(inp[x, y])
    sx = [[-1, 0, 1], [-2, 0, 2], [-1, 0, 1]]
    sy = [[-1, -2, -1], [0, 0, 0], [1, 2, 1]]
    gx, gy = hl.Func("gx"), hl.Func("gy")
    gx[x, y] = hl.clamp(_stencil(hw, sx, hl.i16), -180, 180)
    gy[x, y] = hl.clamp(_stencil(hw, sy, hl.i16), -180, 180)
    prods = {}
    for name, a, b in (("xx", gx, gx), ("yy", gy, gy), ("xy", gx, gy)):
        p = hl.Func("l" + name)
        p[x, y] = (a[x, y] * b[x, y]) >> 6
        s = hl.Func("s" + name)
        s[x, y] = _stencil(p, [[1] * 3] * 3, hl.i16) >> 6
        prods[name] = s
    cim = hl.Func("cim")
    sxx, syy, sxy = prods["xx"][x, y], prods["yy"][x, y], prods["xy"][x, y]
    cim[x, y] = sxx * syy - sxy * sxy - (((sxx + syy) * (sxx + syy)) >> 4)
    centre = cim[x + 1, y + 1]
    neigh = None
    for dy in range(3):
        for dx in range(3):
            if (dx, dy) != (1, 1):
                neigh = cim[x + dx, y + dy] if neigh is None else hl.max(neigh, cim[x + dx, y + dy])
    out = hl.Func("out")
    out[x, y] = hl.select((centre > neigh) & (centre >= 1), hl.u8(255), hl.u8(0))
    for f in (gx, gy, cim, *prods.values()):
        f.compute_root()
    return out


def halide_unsharp(inp):
    hw = hl.Func("hw")
    hw[x, y, c] = hl.u16(inp[x, y, c])
    gray = hl.Func("gray")
    gray[x, y] = (77 * hw[x, y, 0] + 150 * hw[x, y, 1] + 29 * hw[x, y, 2]) >> 8
    wide = hl.Func("wide")
    wide[x, y] = hl.u32(gray[x, y])
    blur = hl.Func("blur")
    blur[x, y] = hl.u16(_stencil(wide, references.unsharp_weights().tolist(), hl.u32) >> 12)
    sharpen = hl.Func("sharpen")
    sharpen[x, y] = hl.u16(hl.clamp(2 * hl.i16(gray[x + 3, y + 3]) - hl.i16(blur[x, y]), 0, 255))
    i = hl.Var("i")
    recip = hl.Func("recip")
    recip[i] = hl.u16(256) / hl.max(hl.u16(i), 1)
    ratio = hl.Func("ratio")
    ratio[x, y] = sharpen[x, y] * recip[hl.i32(gray[x + 3, y + 3])]
    out = hl.Func("out")
    out[x, y, c] = hl.u8(hl.min((hl.u32(ratio[x, y]) * hl.u32(hw[x + 3, y + 3, c])) >> 8, 255))
    for f in (gray, blur, recip):
        f.compute_root()
    return out


def halide_camera_pipeline(inp):
    raw = hl.Func("raw")
    raw[x, y] = hl.i32(inp[x, y])
    same = [raw[x + 2, y], raw[x + 2, y + 4], raw[x, y + 2], raw[x + 4, y + 2]]
    dn = hl.Func("dn")  # hot pixel suppression; dn(x, y) is raw (x + 2, y + 2)
    dn[x, y] = hl.clamp(raw[x + 2, y + 2], hl.min(hl.min(same[0], same[1]), hl.min(same[2], same[3])),
                        hl.max(hl.max(same[0], same[1]), hl.max(same[2], same[3])))
    grn = hl.Func("grn")  # green at dn(x, y)
    w, e, n, s = dn[x - 1, y], dn[x + 1, y], dn[x, y - 1], dn[x, y + 1]
    grn[x, y] = hl.select(x % 2 != y % 2, dn[x, y],
                          hl.select(hl.absd(w, e) < hl.absd(n, s), (w + e) >> 1, (n + s) >> 1))

    def d(dx, dy):  # output (x, y) sits on dn(x + 2, y + 2)
        return dn[x + 2 + dx, y + 2 + dy]

    def g(dx, dy):
        return grn[x + 2 + dx, y + 2 + dy]

    def diff(a, b):
        return g(0, 0) - ((g(*a) + g(*b)) >> 1) + ((d(*a) + d(*b)) >> 1)

    horiz, vert = diff((-1, 0), (1, 0)), diff((0, -1), (0, 1))
    diag = hl.select(hl.absd(d(-1, -1), d(1, 1)) < hl.absd(d(1, -1), d(-1, 1)), diff((-1, -1), (1, 1)),
                     diff((1, -1), (-1, 1)))
    even_x, even_y = x % 2 == 0, y % 2 == 0
    red, blue = even_x & even_y, ~even_x & ~even_y
    rgb = hl.Func("rgb")
    rgb[x, y, c] = hl.clamp(hl.select(
        c == 0, hl.select(red, d(0, 0), hl.select(blue, diag, hl.select(even_y, horiz, vert))),
        c == 1, g(0, 0),
        hl.select(blue, d(0, 0), hl.select(red, diag, hl.select(even_y, vert, horiz)))), 0, 255)
    m = [[300, -30, -14], [-20, 290, -14], [-10, -40, 306]]
    corrected = hl.Func("corrected")
    corrected[x, y, c] = hl.clamp(hl.select(
        c == 0, m[0][0] * rgb[x, y, 0] + m[0][1] * rgb[x, y, 1] + m[0][2] * rgb[x, y, 2],
        c == 1, m[1][0] * rgb[x, y, 0] + m[1][1] * rgb[x, y, 1] + m[1][2] * rgb[x, y, 2],
        m[2][0] * rgb[x, y, 0] + m[2][1] * rgb[x, y, 1] + m[2][2] * rgb[x, y, 2]) >> 8, 0, 255)
    i = hl.Var("i")
    curve = hl.Func("curve")
    curve[i] = hl.u8(hl.u32(i) * (510 - hl.u32(i)) / 255)
    out = hl.Func("out")
    out[x, y, c] = curve[corrected[x, y, c]]
    for f in (dn, grn, rgb, curve):
        f.compute_root()
    return out


def halide_conv_layer(inp, weights):
    hw = hl.Func("hw")
    hw[x, y, c] = hl.i16(inp[x, y, c])
    conv = hl.Func("conv")
    ci_n, co_n = weights.shape[:2]
    terms = []
    for co in range(co_n):
        acc = None
        for ci in range(ci_n):
            for kx in range(3):
                for ky in range(3):
                    t = hl.i16(int(weights[ci, co, kx, ky])) * hw[x + kx, y + ky, ci]
                    acc = t if acc is None else acc + t
        terms.append(acc)
    expr = terms[-1]
    for co in reversed(range(co_n - 1)):
        expr = hl.select(c == co, terms[co], expr)
    conv[x, y, c] = expr
    out = hl.Func("out")
    out[x, y, c] = hl.u8(hl.clamp(conv[x, y, c] >> 6, 0, 255))
    return out


def halide_gemm(a, b, k):
    r = hl.RDom([(0, k)])
    out = hl.Func("out")
    out[x, y] = hl.u32(0)
    out[x, y] += hl.u32(a[r.x, y]) * hl.u32(b[x, r.x])
    return out


@pytest.mark.parametrize("name", ["pointwise", "gaussian", "cascade", "harris", "unsharp", "camera_pipeline",
                                  "conv_layer", "gemm"])
def test_loom_cpu_equals_halide(name):
    mod = example(name)
    out, _ = mod.build("cpu")
    size = (23, 13)
    inputs = random_inputs(name, mod, size, salt="halide")
    osize = output_size(name, size)
    got = compile_cpu(out, {k: v.shape for k, v in inputs.items()}, osize)(inputs)
    if name == "gemm":
        hfunc = halide_gemm(hl.Buffer(inputs["A"]), hl.Buffer(inputs["B"]), mod.K)
    elif name == "conv_layer":
        hfunc = halide_conv_layer(hl.Buffer(inputs["input"]), mod.weights())
    else:
        hfunc = globals()[f"halide_{name}"](hl.Buffer(inputs["input"]))
    want = np.asarray(hfunc.realize(list(osize)))
    assert want.shape == got.shape and want.dtype == got.dtype
    np.testing.assert_array_equal(got, want)
    assert len(np.unique(want)) > 1  # not a degenerate image
