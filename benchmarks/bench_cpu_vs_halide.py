"""The CPU path against real Halide on twenty-three pipelines, each written once for both with the same schedule.

blur (separable 3x3, per tile, per tile with the rows of tiles ``parallel``, sliding per row in folded storage, and
at root), a 7x7 box (RDom update), unsharp in f32 (per tile), harris-like
gradients in f32, a 256-bin histogram (RDom scatter), a two-level pyramid (down and up-sampling), one laplacian
level with its down- and up-sampling computed per 64 x 64 tile (per-tile windows of x / 2 reads), a 2x2-block
average read through x - x % 2 and (y / 2) * 2 from a producer per tile, a 3x3 16 -> 16 channel convolution, a gamma LUT gather, a tiled transpose and row sums;
then a bilinear 2x resize whose rows are interpolated per 32x8 tile (float indices), a 3-D stencil through each
boundary condition at root, per-pixel 8x8 sums whose rows an rfactor intermediate sums ``parallel``, a 3-channel
unsharp mask through mirror_image with vectorized parallel tiles, and a gain and column offset given as Params. Halide is JIT-compiled for the host with
no vectorize; both run serially except blur3_par_u16, whose ``parallel`` loop both run on every core (loom through
OpenMP, ``OMP_NUM_THREADS``; Halide's thread pool, ``HL_NUM_THREADS``, both default to the CPU count); f32 pipelines under Halide's StrictFloat
(loom rounds every operation). Not like for like in one respect: gcc auto-vectorizes loom's C at -O3 where it
can, while Halide vectorizes only what a schedule says, so these scalar schedules favour loom on plain stencils
(a schedule with ``vectorize`` would favour Halide: loom ignores it); ``LOOM_CFLAGS=-fno-tree-vectorize`` runs
scalar against scalar. Outputs must be equal (the script fails otherwise). Times: median of ``--repeats`` calls after a warm-up, compilation excluded;
loom's compile time is listed. The table is ``loom ms / Halide ms``; below 1 loom is faster. Last, the memory
floor: the time numpy takes to copy the u16 image once, which a blur reading and writing it cannot beat.

    python benchmarks/bench_cpu_vs_halide.py [--size 2048x1536] [--repeats 5] [--quick] [NAME ...]

``--quick``: 256 x 192 images, 2 repeats.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np

KEEP = []  # hl.Buffer(ndarray) does not keep its array alive


class _Language:
    """What a pipeline below is written against: loom's pipeline language or Halide (``m``), with the types
    each names its own way."""

    def __init__(self, m, types):
        self.m = m
        self.u8, self.u16, self.i32, self.f32 = m.u8, m.u16, m.i32, m.f32
        self.T = types

    def Var(self, n):
        return self.m.Var(n)

    def Func(self, n):
        return self.m.Func(n)

    @staticmethod
    def f32c(v):
        """A float constant f32 holds exactly (Halide warns about one it would round)."""
        return float(np.float32(v))


class LoomB(_Language):
    def __init__(self):
        import loom.frontends.pipeline as lp
        super().__init__(lp, {"u8": lp.UInt8, "u16": lp.UInt16, "i32": lp.Int32, "f32": lp.Float32})

    def img(self, name, t, dims, arr):
        return self.m.ImageParam(self.T[t], dims, name)

    def rdom(self, *pairs):
        return self.m.RDom(*[v for p in pairs for v in p])

    def param(self, t, name, value):
        return self.m.Param(self.T[t], name, value)

    def buf(self, arr, name):
        return self.m.Buffer(arr, name)


class HalideB(_Language):
    def __init__(self):
        import halide as hl
        super().__init__(hl, {"u8": hl.UInt(8), "u16": hl.UInt(16), "i32": hl.Int(32), "f32": hl.Float(32)})

    def img(self, name, t, dims, arr):
        p = self.m.ImageParam(self.T[t], dims, name)
        b = self.m.Buffer(arr)
        KEEP.extend((arr, b))
        p.set(b)
        return p

    def rdom(self, *pairs):
        return self.m.RDom([self.m.Range(a, b) for a, b in pairs])

    def param(self, t, name, value):
        return self.m.Param(self.T[t], name, value)

    def buf(self, arr, name):
        b = self.m.Buffer(arr)
        KEEP.extend((arr, b))
        return b


def vars_(B, *names):
    return [B.Var(n) for n in names]


# ---------------------------------------------------------------- inputs
def inputs(name, W, H):
    rng = np.random.default_rng(0)
    if name in ("blur3_u16", "blur3_par_u16", "blur3_slide_u16", "blur3_root_u16", "block2x2_tile_u16"):
        return {"input": rng.integers(0, 4096, (H, W)).astype(np.uint16)}
    if name in ("box7_rdom_i32", "hist_u8", "gamma_lut_u8"):
        return {"input": rng.integers(0, 256, (H, W)).astype(np.uint8)}
    if name == "unsharp_f32":
        return {"input": rng.uniform(0.1, 1.0, (3, H, W)).astype(np.float32)}
    if name == "harris_f32":
        return {"input": rng.uniform(0.0, 1.0, (H, W)).astype(np.float32)}
    if name in ("pyramid2_i32", "laplacian_tile_i32"):
        return {"input": rng.integers(0, 4096, (H, W)).astype(np.int32)}
    if name == "conv3x3_c16_i32":
        return {"input": rng.integers(-128, 128, (16, H // 6, H // 6)).astype(np.int32)}
    if name == "transpose_u16":
        return {"input": rng.integers(0, 65536, (W, H)).astype(np.uint16)}  # (H'=W, W'=H): output W x H
    if name == "rowsum_u16":
        return {"input": rng.integers(0, 65536, (H, W)).astype(np.uint16)}
    if name == "resize_tile_f32":  # up-sampled 2x: the output is W x H
        return {"input": rng.uniform(0.0, 1.0, (H // 2, W // 2)).astype(np.float32)}
    if name.startswith("bc3d_"):
        return {"input": rng.integers(0, 4096, (4, H // 2, W // 2)).astype(np.uint16)}
    if name == "rfactor_par_i32":
        return {"input": rng.integers(0, 256, (H // 8, W // 8)).astype(np.uint8)}
    if name == "unsharp_vec_par_f32":
        return {"input": rng.uniform(0.0, 1.0, (3, H, W)).astype(np.float32)}
    if name == "param_offset_u8":
        return {"input": rng.integers(0, 256, (H, W)).astype(np.uint8)}
    raise KeyError(name)


CONV_W = np.random.default_rng(1).integers(-8, 9, (16, 16, 3, 3)).astype(np.int32)  # (Cout, Cin, ky, kx)


def build(name, B, W, H):
    m = B.m
    arr = inputs(name, W, H)["input"]
    x, y, c, xo, yo, xi, yi = vars_(B, "x", "y", "c", "xo", "yo", "xi", "yi")

    if name == "blur3_u16":  # separable 3x3, blur_x per 256x32 tile
        inp = B.img("input", "u16", 2, arr)
        cl = m.BoundaryConditions.repeat_edge(inp)
        bx, out = B.Func("bx"), B.Func("out")
        bx[x, y] = (cl[x - 1, y] + cl[x, y] + cl[x + 1, y]) / 3
        out[x, y] = (bx[x, y - 1] + bx[x, y] + bx[x, y + 1]) / 3
        out.tile(x, y, xo, yo, xi, yi, 256, 32)
        bx.compute_at(out, xo)
        return out, [W, H]

    if name == "blur3_par_u16":  # blur3_u16 with its rows of tiles on threads
        inp = B.img("input", "u16", 2, arr)
        cl = m.BoundaryConditions.repeat_edge(inp)
        bx, out = B.Func("bx"), B.Func("out")
        bx[x, y] = (cl[x - 1, y] + cl[x, y] + cl[x + 1, y]) / 3
        out[x, y] = (bx[x, y - 1] + bx[x, y] + bx[x, y + 1]) / 3
        out.tile(x, y, xo, yo, xi, yi, 256, 32).parallel(yo)
        bx.compute_at(out, xo)
        return out, [W, H]

    if name == "blur3_slide_u16":  # blur_x stored at root, computed per row: a sliding window, storage folded
        inp = B.img("input", "u16", 2, arr)
        cl = m.BoundaryConditions.repeat_edge(inp)
        bx, out = B.Func("bx"), B.Func("out")
        bx[x, y] = (cl[x - 1, y] + cl[x, y] + cl[x + 1, y]) / 3
        out[x, y] = (bx[x, y - 1] + bx[x, y] + bx[x, y + 1]) / 3
        bx.store_root().compute_at(out, y)
        return out, [W, H]

    if name == "blur3_root_u16":  # separable 3x3, blur_x computed at root (whole image, no tiles)
        inp = B.img("input", "u16", 2, arr)
        cl = m.BoundaryConditions.repeat_edge(inp)
        bx, out = B.Func("bx"), B.Func("out")
        bx[x, y] = (cl[x - 1, y] + cl[x, y] + cl[x + 1, y]) / 3
        out[x, y] = (bx[x, y - 1] + bx[x, y] + bx[x, y + 1]) / 3
        bx.compute_root()
        return out, [W, H]

    if name == "box7_rdom_i32":  # 7x7 box via RDom update, output computed root
        inp = B.img("input", "u8", 2, arr)
        cl = m.BoundaryConditions.repeat_edge(inp)
        r = B.rdom((-3, 7), (-3, 7))
        out = B.Func("out")
        out[x, y] = B.i32(0)
        out[x, y] += B.i32(cl[x + r.x, y + r.y])
        return out, [W, H]

    if name == "unsharp_f32":  # gray, 5-tap separable gaussian, sharpen, ratio; per 128x64 tile
        inp = B.img("input", "f32", 3, arr)
        cl = m.BoundaryConditions.repeat_edge(inp)
        gray, bx, by, out = B.Func("gray"), B.Func("bx"), B.Func("by"), B.Func("out")
        gray[x, y] = B.f32c(0.299) * cl[x, y, 0] + B.f32c(0.587) * cl[x, y, 1] + B.f32c(0.114) * cl[x, y, 2]
        k = [0.0625, 0.25, 0.375, 0.25, 0.0625]
        bx[x, y] = (k[0] * gray[x - 2, y] + k[1] * gray[x - 1, y] + k[2] * gray[x, y]
                    + k[3] * gray[x + 1, y] + k[4] * gray[x + 2, y])
        by[x, y] = (k[0] * bx[x, y - 2] + k[1] * bx[x, y - 1] + k[2] * bx[x, y]
                    + k[3] * bx[x, y + 1] + k[4] * bx[x, y + 2])
        sharpen = 2.0 * gray[x, y] - by[x, y]
        ratio = sharpen / gray[x, y]
        out[x, y, c] = ratio * inp[x, y, c]
        out.reorder(c, x, y).tile(x, y, xo, yo, xi, yi, 128, 64)
        gray.compute_at(out, xo)
        bx.compute_at(out, xo)
        by.compute_at(out, xo)
        return out, [W, H, 3]

    if name == "harris_f32":  # sobel gradients per tile, products inline, 3x3 box sums inline
        inp = B.img("input", "f32", 2, arr)
        cl = m.BoundaryConditions.repeat_edge(inp)
        ix, iy, out = B.Func("ix"), B.Func("iy"), B.Func("out")
        ix[x, y] = ((cl[x + 1, y - 1] - cl[x - 1, y - 1]) + 2.0 * (cl[x + 1, y] - cl[x - 1, y])
                    + (cl[x + 1, y + 1] - cl[x - 1, y + 1]))
        iy[x, y] = ((cl[x - 1, y + 1] - cl[x - 1, y - 1]) + 2.0 * (cl[x, y + 1] - cl[x, y - 1])
                    + (cl[x + 1, y + 1] - cl[x + 1, y - 1]))
        ixx, iyy, ixy = B.Func("ixx"), B.Func("iyy"), B.Func("ixy")
        ixx[x, y] = ix[x, y] * ix[x, y]
        iyy[x, y] = iy[x, y] * iy[x, y]
        ixy[x, y] = ix[x, y] * iy[x, y]

        def box(f):
            s = f[x - 1, y - 1]
            for dx, dy in [(0, -1), (1, -1), (-1, 0), (0, 0), (1, 0), (-1, 1), (0, 1), (1, 1)]:
                s = s + f[x + dx, y + dy]
            return s
        sxx, syy, sxy = box(ixx), box(iyy), box(ixy)
        det = sxx * syy - sxy * sxy
        tr = sxx + syy
        out[x, y] = det - B.f32c(0.04) * tr * tr
        out.tile(x, y, xo, yo, xi, yi, 128, 64)
        ix.compute_at(out, xo)
        iy.compute_at(out, xo)
        return out, [W, H]

    if name == "hist_u8":  # 256-bin histogram, RDom scatter over the image
        inp = B.img("input", "u8", 2, arr)
        r = B.rdom((0, W), (0, H))
        hist = B.Func("hist")
        hist[x] = B.i32(0)
        hist[m.clamp(B.i32(inp[r.x, r.y]), 0, 255)] += 1
        return hist, [256]

    if name == "pyramid2_i32":  # 2 levels down (2x2 avg) and up (x/2 taps), levels compute_root
        inp = B.img("input", "i32", 2, arr)
        cl = m.BoundaryConditions.repeat_edge(inp)
        d1, d2, u1, u0, out = (B.Func(n) for n in ("d1", "d2", "u1", "u0", "out"))
        d1[x, y] = (cl[2 * x, 2 * y] + cl[2 * x + 1, 2 * y] + cl[2 * x, 2 * y + 1] + cl[2 * x + 1, 2 * y + 1]) / 4
        d2[x, y] = (d1[2 * x, 2 * y] + d1[2 * x + 1, 2 * y] + d1[2 * x, 2 * y + 1] + d1[2 * x + 1, 2 * y + 1]) / 4
        u1[x, y] = (d2[x / 2, y / 2] + d2[(x + 1) / 2, y / 2] + d2[x / 2, (y + 1) / 2]
                    + d2[(x + 1) / 2, (y + 1) / 2]) / 4
        u0[x, y] = (u1[x / 2, y / 2] + u1[(x + 1) / 2, y / 2] + u1[x / 2, (y + 1) / 2]
                    + u1[(x + 1) / 2, (y + 1) / 2]) / 4
        out[x, y] = inp[x, y] - u0[x, y]
        d1.compute_root()
        d2.compute_root()
        u1.compute_root()
        return out, [W, H]

    if name == "laplacian_tile_i32":  # one level, down and up per 64x64 tile (x / 2 reads: per-tile windows)
        inp = B.img("input", "i32", 2, arr)
        cl = m.BoundaryConditions.repeat_edge(inp)
        down, up, out = B.Func("down"), B.Func("up"), B.Func("out")
        down[x, y] = (cl[2 * x, 2 * y] + cl[2 * x + 1, 2 * y] + cl[2 * x, 2 * y + 1] + cl[2 * x + 1, 2 * y + 1]) / 4
        up[x, y] = (down[x / 2, y / 2] + down[(x + 1) / 2, y / 2] + down[x / 2, (y + 1) / 2]
                    + down[(x + 1) / 2, (y + 1) / 2]) / 4
        out[x, y] = inp[x, y] - up[x, y]
        out.tile(x, y, xo, yo, xi, yi, 64, 64)
        up.compute_at(out, xo)
        down.compute_at(out, xo)
        return out, [W, H]

    if name == "block2x2_tile_u16":  # each pixel the mean of its 2x2 block (x - x % 2, (y / 2) * 2), per 64x32 tile
        inp = B.img("input", "u16", 2, arr)
        cl = m.BoundaryConditions.repeat_edge(inp)
        raw, out = B.Func("raw"), B.Func("out")
        raw[x, y] = cl[x, y] * 3 + 1
        bx, by = x - x % 2, (y / 2) * 2
        out[x, y] = (raw[bx, by] + raw[bx + 1, by] + raw[bx, by + 1] + raw[bx + 1, by + 1]) / 4
        out.tile(x, y, xo, yo, xi, yi, 64, 32)
        raw.compute_at(out, xo)
        return out, [W, H]

    if name == "conv3x3_c16_i32":  # 3x3 conv, 16 -> 16 channels, RDom over taps and channels
        inp = B.img("input", "i32", 3, arr)
        cl = m.BoundaryConditions.repeat_edge(inp)
        wts = B.buf(CONV_W, "wts")
        r = B.rdom((0, 3), (0, 3), (0, 16))
        out = B.Func("out")
        out[x, y, c] = B.i32(0)
        out[x, y, c] += cl[x + r.x - 1, y + r.y - 1, r.z] * wts[r.x, r.y, r.z, c]
        out.update().reorder(x, r.x, r.y, r.z, y, c)
        return out, [H // 6, H // 6, 16]

    if name == "gamma_lut_u8":  # u8 LUT computed root (sqrt gamma), gathered per pixel
        inp = B.img("input", "u8", 2, arr)
        lut, out = B.Func("lut"), B.Func("out")
        i = x
        lut[i] = B.u8(m.clamp(m.sqrt(B.f32(i) * B.f32c(1.0 / 255.0)) * 255.0 + 0.5, 0.0, 255.0))
        out[x, y] = lut[B.i32(inp[x, y])]
        lut.compute_root()
        return out, [W, H]

    if name == "transpose_u16":  # out[x, y] = in[y, x] in 32x32 tiles
        inp = B.img("input", "u16", 2, arr)
        out = B.Func("out")
        out[x, y] = inp[y, x]
        out.tile(x, y, xo, yo, xi, yi, 32, 32)
        return out, [W, H]

    if name == "rowsum_u16":  # sum of each row (RDom over x), i32
        inp = B.img("input", "u16", 2, arr)
        r = B.rdom((0, W))
        out = B.Func("out")
        out[y] = B.i32(0)
        out[y] += B.i32(inp[r.x, y])
        return out, [H]

    if name == "resize_tile_f32":  # bilinear 2x up-sampling, rows interpolated per 32x8 tile (float indices)
        inp = B.img("input", "f32", 2, arr)
        cl = m.BoundaryConditions.repeat_edge(inp)
        hz, out = B.Func("hz"), B.Func("out")
        fx = (B.f32(x) + 0.5) * 0.5 - 0.5
        fy = (B.f32(y) + 0.5) * 0.5 - 0.5
        ix, iy = B.i32(m.floor(fx)), B.i32(m.floor(fy))
        wx, wy = fx - m.floor(fx), fy - m.floor(fy)
        hz[x, y] = cl[ix, y] * (1.0 - wx) + cl[ix + 1, y] * wx
        out[x, y] = hz[x, iy] * (1.0 - wy) + hz[x, iy + 1] * wy
        out.tile(x, y, xo, yo, xi, yi, 32, 8)
        hz.compute_at(out, xo)
        return out, [W, H]

    if name.startswith("bc3d_"):  # a 5-point stencil over a 3-D image through a boundary condition, at root
        inp = B.img("input", "u16", 3, arr)
        kind = name[len("bc3d_"):]
        bc = m.BoundaryConditions
        cl = (bc.repeat_edge(inp) if kind == "repeat_edge" else bc.mirror_image(inp) if kind == "mirror"
              else bc.mirror_interior(inp) if kind == "mirror_interior" else bc.constant_exterior(inp, 7))
        out = B.Func("out")
        out[x, y, c] = (cl[x - 1, y, c] + cl[x + 1, y, c] + cl[x, y - 1, c] + cl[x, y + 1, c]
                        + cl[x, y, c - 1] + cl[x, y, c + 1])
        return out, [W // 2, H // 2, 4]

    if name == "rfactor_par_i32":  # per-pixel 8x8 sums whose rows are factored out and run in parallel
        inp = B.img("input", "u8", 2, arr)
        cl = m.BoundaryConditions.repeat_edge(inp)
        r = B.rdom((0, 8), (0, 8))
        u = B.Var("u")
        out = B.Func("out")
        out[x, y] = B.i32(0)
        out[x, y] += B.i32(cl[x + r.x, y + r.y])
        intm = out.update(0).rfactor([(r.y, u)]) if B.m.__name__ == "halide" else out.update(0).rfactor(r.y, u)
        intm.update(0).parallel(u)
        return out, [W // 8, H // 8]

    if name == "unsharp_vec_par_f32":  # 3-channel unsharp through mirror_image, clamped; tiles vectorized, parallel
        inp = B.img("input", "f32", 3, arr)
        cl = m.BoundaryConditions.mirror_image(inp)
        bx, by, out = B.Func("bx"), B.Func("by"), B.Func("out")
        bx[x, y, c] = (cl[x - 1, y, c] + 2 * cl[x, y, c] + cl[x + 1, y, c]) * 0.25
        by[x, y, c] = (bx[x, y - 1, c] + 2 * bx[x, y, c] + bx[x, y + 1, c]) * 0.25
        out[x, y, c] = m.clamp(2 * cl[x, y, c] - by[x, y, c], 0.0, 1.0)
        out.tile(x, y, xo, yo, xi, yi, 64, 16).vectorize(xi, 8).parallel(yo)
        bx.compute_at(out, xo).vectorize(x, 8)
        return out, [W, H, 3]

    if name == "param_offset_u8":  # a gain and a column offset given as Params; rows slide in folded storage
        inp = B.img("input", "u8", 2, arr)
        gain, off = B.param("f32", "gain", 1.5), B.param("i32", "off", 3)
        f, out = B.Func("f"), B.Func("out")
        f[x, y] = B.f32(m.BoundaryConditions.repeat_edge(inp)[x + off, y]) * gain
        out[x, y] = B.u8(m.clamp(f[x, y] + f[x, y + 1], 0.0, 255.0))
        out.split(x, xo, xi, 16).vectorize(xi, 8)
        f.store_root().compute_at(out, y)
        return out, [W, H]
    raise KeyError(name)



NAMES = ["blur3_u16", "blur3_par_u16", "blur3_slide_u16", "blur3_root_u16", "box7_rdom_i32", "unsharp_f32",
         "harris_f32", "hist_u8", "pyramid2_i32", "laplacian_tile_i32", "block2x2_tile_u16", "conv3x3_c16_i32", "gamma_lut_u8", "transpose_u16", "rowsum_u16",
         "resize_tile_f32", "bc3d_repeat_edge", "bc3d_constant", "bc3d_mirror", "bc3d_mirror_interior",
         "rfactor_par_i32", "unsharp_vec_par_f32", "param_offset_u8"]
FLOAT = {"unsharp_f32", "harris_f32", "resize_tile_f32", "unsharp_vec_par_f32", "param_offset_u8"}


def median_time(fn, repeats: int) -> tuple[float, object]:
    result = fn()  # warm-up
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), result


def run_one(name: str, W: int, H: int, repeats: int) -> dict:
    import halide as hl

    from loom.jit.pipeline import compile_cpu

    ins = inputs(name, W, H)
    out, sizes = build(name, LoomB(), W, H)
    t0 = time.perf_counter()
    program = compile_cpu(out, {k: v.shape for k, v in ins.items()}, tuple(sizes))
    compile_s = time.perf_counter() - t0
    loom_s, got = median_time(lambda: program(ins), repeats)
    hout, hsizes = build(name, HalideB(), W, H)
    target = hl.get_jit_target_from_environment()
    if name in FLOAT:
        target = target.with_feature(hl.TargetFeature.StrictFloat)
    hout.compile_jit(target)
    halide_s, want = median_time(lambda: np.asarray(hout.realize(hsizes)), repeats)
    if not np.array_equal(np.asarray(got), np.asarray(want)):
        raise SystemExit(f"{name}: loom and Halide differ")
    shape = "x".join(map(str, ins["input"].shape[::-1]))
    return dict(name=name, shape=shape, loom=loom_s, halide=halide_s, compile=compile_s)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("names", nargs="*", choices=NAMES + [[]], default=[], metavar="NAME")
    ap.add_argument("--size", default="2048x1536")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args(argv)
    os.environ.setdefault("HL_NUM_THREADS", str(os.cpu_count()))  # as OpenMP's default: only parallel loops use it
    W, H = (256, 192) if args.quick else map(int, args.size.split("x"))
    repeats = 2 if args.quick else args.repeats
    rows = []
    print(f"{'pipeline':20} {'input':>14} {'loom ms':>9} {'Halide ms':>10} {'loom/Halide':>12} {'compile s':>10}")
    for name in args.names or NAMES:
        r = run_one(name, W, H, repeats)
        rows.append(r)
        print(f"{r['name']:20} {r['shape']:>14} {r['loom'] * 1e3:9.2f} {r['halide'] * 1e3:10.2f} "
              f"{r['loom'] / r['halide']:12.2f} {r['compile']:10.2f}", flush=True)
    ratios = [r["loom"] / r["halide"] for r in rows]
    print(f"geomean loom/Halide: {float(np.exp(np.mean(np.log(ratios)))):.2f}; every output equal to Halide's")
    # the memory floor of the u16 blurs: a pipeline reading and writing the image once cannot beat a copy of it,
    # so a blur near this time gains little from threads
    src = np.ones((H, W), np.uint16)
    dst = np.empty_like(src)
    copy_s, _ = median_time(lambda: np.copyto(dst, src), repeats)
    print(f"memory floor: copying the {W}x{H} u16 image (read + write, {2 * src.nbytes / 1e6:.1f} MB) takes "
          f"{copy_s * 1e3:.3f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
