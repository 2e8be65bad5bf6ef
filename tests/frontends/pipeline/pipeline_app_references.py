"""Independent numpy implementations of the example pipelines (plain slicing, no loom).

Arrays are (rows, cols) = (y, x); ``w, h`` is the output size.
"""

import math

import numpy as np


def cascade(img, w, h):
    k = np.array([[1, 2, 1], [2, 4, 2], [1, 2, 1]], np.uint16)
    a = img.astype(np.uint16)
    c1 = np.zeros((h + 2, w + 2), np.uint16)
    for dy in range(3):
        for dx in range(3):
            c1 += k[dy, dx] * a[dy:dy + h + 2, dx:dx + w + 2]
    c1 //= 16
    c2 = np.zeros((h, w), np.uint16)
    for dy in range(3):
        for dx in range(3):
            c2 += k[dy, dx] * c1[dy:dy + h, dx:dx + w]
    return (c2 // 16).astype(np.uint8)


def gaussian(img, w, h):
    k = np.array([[24, 30, 24], [30, 37, 30], [24, 30, 24]], np.uint16)
    a = img.astype(np.uint16)
    acc = np.zeros((h, w), np.uint16)
    for dy in range(3):
        for dx in range(3):
            acc += k[dy, dx] * a[dy:dy + h, dx:dx + w]
    return (acc // 256).astype(np.uint8)


def tone_map(img, w, h):
    """In float32 throughout, each operation in the pipeline's order (rounding happens per operation)."""
    f = np.float32
    lum = img.astype(f) / f(255.0)
    bx = (lum[:, 0:w] + f(2.0) * lum[:, 1:w + 1] + lum[:, 2:w + 2]) * f(0.25)
    blur = (bx[0:h] + f(2.0) * bx[1:h + 1] + bx[2:h + 2]) * f(0.25)
    detail = lum[1:h + 1, 1:w + 1] - blur
    lifted = f(255.0) * np.sqrt(blur) * (f(1.0) + f(2.0) * detail)
    return np.clip(np.floor(lifted + f(0.5)), f(0.0), f(255.0)).astype(np.int16).astype(np.uint8)


def pointwise(img, w, h):
    a = img.astype(np.uint16)
    return np.minimum((a * np.uint16(3)) >> 1, 255).astype(np.uint8)


def harris(img, w, h):
    a = img.astype(np.int16)
    sx = np.array([[-1, 0, 1], [-2, 0, 2], [-1, 0, 1]], np.int16)
    sy = sx.T.copy()
    H, W = h + 4, w + 4  # gradient region
    gx = np.zeros((H, W), np.int16)
    gy = np.zeros((H, W), np.int16)
    for dy in range(3):
        for dx in range(3):
            gx += sx[dy, dx] * a[dy:dy + H, dx:dx + W]
            gy += sy[dy, dx] * a[dy:dy + H, dx:dx + W]
    gx = np.clip(gx, -180, 180).astype(np.int16)
    gy = np.clip(gy, -180, 180).astype(np.int16)
    lxx, lyy, lxy = (gx * gx) >> 6, (gy * gy) >> 6, (gx * gy) >> 6

    def box(v):
        out = np.zeros((h + 2, w + 2), np.int16)
        for dy in range(3):
            for dx in range(3):
                out += v[dy:dy + h + 2, dx:dx + w + 2]
        return out >> 6

    sxx, syy, sxy = box(lxx), box(lyy), box(lxy)
    det = sxx * syy - sxy * sxy
    trace = sxx + syy
    cim = (det - ((trace * trace) >> 4)).astype(np.int16)
    c = cim[1:1 + h, 1:1 + w]
    neigh = np.full((h, w), np.iinfo(np.int16).min, np.int16)
    for dy in range(3):
        for dx in range(3):
            if (dx, dy) != (1, 1):
                neigh = np.maximum(neigh, cim[dy:dy + h, dx:dx + w])
    return np.where((c > neigh) & (c >= 1), 255, 0).astype(np.uint8)


def unsharp_weights():
    g = [math.exp(-((i - 3) ** 2) / (2 * 1.5 * 1.5)) for i in range(7)]
    s = sum(g)
    w = np.array([[round(4096 * (gb / s) * (ga / s)) for ga in g] for gb in g], dtype=np.int64)
    w[3, 3] += 4096 - w.sum()
    return w.astype(np.uint32)


def unsharp(img, w, h):
    """img has shape (3, h+6, w+6); returns (3, h, w)."""
    a = img.astype(np.uint16)
    gray = ((np.uint16(77) * a[0] + np.uint16(150) * a[1] + np.uint16(29) * a[2]) >> 8).astype(np.uint16)
    k = unsharp_weights()
    acc = np.zeros((h, w), np.uint32)
    for dy in range(7):
        for dx in range(7):
            acc += k[dy, dx] * gray[dy:dy + h, dx:dx + w].astype(np.uint32)
    blur = (acc >> 12).astype(np.uint16)
    gc = gray[3:3 + h, 3:3 + w]
    sharpen = np.clip(2 * gc.astype(np.int16) - blur.astype(np.int16), 0, 255).astype(np.uint16)
    recip = (256 // np.maximum(np.arange(256), 1)).astype(np.uint16)
    ratio = (sharpen * recip[gc]).astype(np.uint16)
    out = np.minimum((ratio.astype(np.uint32)[None] * a[:, 3:3 + h, 3:3 + w].astype(np.uint32)) >> 8, 255)
    return out.astype(np.uint8)


def conv_layer(img, w, h, weights):
    """img (CI, h+2, w+2) u8, weights [ci, co, kx, ky] i16 -> (CO, h, w) u8, i16 arithmetic."""
    ci_n, co_n = weights.shape[:2]
    a = img.astype(np.int16)
    out = np.zeros((co_n, h, w), np.int16)
    for co in range(co_n):
        for ci in range(ci_n):
            for ky in range(3):
                for kx in range(3):
                    out[co] += weights[ci, co, kx, ky] * a[ci, ky:ky + h, kx:kx + w]
    return np.clip(out >> 6, 0, 255).astype(np.uint8)


def dnn_conv(img, w, h, weights, stride=1):
    """img (CI, H, W) u8, weights [ci, co, kx, ky] i16, stride -> (CO, h, w) u8, i16 (wrapping) arithmetic."""
    ci_n, co_n, k = weights.shape[0], weights.shape[1], weights.shape[2]
    a = img.astype(np.int64)
    out = np.zeros((co_n, h, w), np.int64)
    for co in range(co_n):
        for ci in range(ci_n):
            for ky in range(k):
                for kx in range(k):
                    win = a[ci, ky:ky + stride * (h - 1) + 1:stride, kx:kx + stride * (w - 1) + 1:stride]
                    out[co] += int(weights[ci, co, kx, ky]) * win
    return np.clip(out.astype(np.int16) >> 6, 0, 255).astype(np.uint8)


def gemm(a, b):
    return (a.astype(np.uint32) @ b.astype(np.uint32)).astype(np.uint32)


def camera_pipeline(raw, w, h):
    """raw (h+8, w+8) u8 RGGB (red at even x, even y) -> (3, h, w) u8."""
    r16 = raw.astype(np.int32)
    hh, ww = h + 4, w + 4  # hot pixel suppression: each pixel within the range of its 4 same-colour neighbours
    same = [r16[0:hh, 2:ww + 2], r16[4:hh + 4, 2:ww + 2], r16[2:hh + 2, 0:ww], r16[2:hh + 2, 4:ww + 4]]
    dn = np.minimum(np.maximum(r16[2:hh + 2, 2:ww + 2], np.minimum.reduce(same)), np.maximum.reduce(same))
    Y, X = np.mgrid[0:hh, 0:ww]  # dn[Y, X] is raw (X + 2, Y + 2): same parity
    is_green = (X % 2) != (Y % 2)
    pad = np.pad(dn, 1, mode="edge")  # only the border of green is padded, and it is never read
    wv, e, n, s = pad[1:-1, :-2], pad[1:-1, 2:], pad[:-2, 1:-1], pad[2:, 1:-1]
    green = np.where(is_green, dn, np.where(np.abs(wv - e) < np.abs(n - s), (wv + e) >> 1, (n + s) >> 1))

    def d(dx, dy):  # output (x, y) sits on dn[y + 2, x + 2]
        return dn[2 + dy:2 + dy + h, 2 + dx:2 + dx + w]

    def g(dx, dy):
        return green[2 + dy:2 + dy + h, 2 + dx:2 + dx + w]

    def diff(a, b):
        return g(0, 0) - ((g(*a) + g(*b)) >> 1) + ((d(*a) + d(*b)) >> 1)

    horiz, vert = diff((-1, 0), (1, 0)), diff((0, -1), (0, 1))
    diag = np.where(np.abs(d(-1, -1) - d(1, 1)) < np.abs(d(1, -1) - d(-1, 1)), diff((-1, -1), (1, 1)),
                    diff((1, -1), (-1, 1)))
    even_x, even_y = np.arange(w)[None, :] % 2 == 0, np.arange(h)[:, None] % 2 == 0
    red, blue = even_x & even_y, ~even_x & ~even_y
    r = np.clip(np.where(red, d(0, 0), np.where(blue, diag, np.where(even_y, horiz, vert))), 0, 255)
    gr = np.clip(g(0, 0), 0, 255)
    b = np.clip(np.where(blue, d(0, 0), np.where(red, diag, np.where(even_y, vert, horiz))), 0, 255)
    rgb = np.stack([r, gr, b]).astype(np.int32)
    ccm = np.array([[300, -30, -14], [-20, 290, -14], [-10, -40, 306]], np.int32)
    corrected = np.clip(np.einsum("ck,khw->chw", ccm, rgb) >> 8, 0, 255)
    curve = (np.arange(256, dtype=np.uint32) * (510 - np.arange(256, dtype=np.uint32)) // 255).astype(np.uint8)
    return curve[corrected]


def laplacian_pyramid(img, w, h):
    """img (h', w') u8 with h' >= h, w' >= w even-rounded; the finest Laplacian band, biased by 128."""
    a = img.astype(np.int32)
    hh, ww = (h + 1) // 2, (w + 1) // 2
    down = (a[0:2 * hh:2, 0:2 * ww:2] + a[0:2 * hh:2, 1:2 * ww:2] + a[1:2 * hh:2, 0:2 * ww:2]
            + a[1:2 * hh:2, 1:2 * ww:2]) // 4
    up = np.repeat(np.repeat(down, 2, axis=0), 2, axis=1)[:h, :w]
    return np.clip(a[:h, :w] - up + 128, 0, 255).astype(np.uint8)


def mobilenet_separable(img, w, h, weights):
    """img (C, h+2, w+2) u8; weights (depthwise [c, kx, ky], pointwise [c, co]) i16 -> (CO, h, w) u8."""
    wd, wp = weights
    a = img.astype(np.int16)
    dw = np.zeros((a.shape[0], h, w), np.int16)
    for c in range(a.shape[0]):
        for ky in range(3):
            for kx in range(3):
                dw[c] += wd[c, kx, ky] * a[c, ky:ky + h, kx:kx + w]
    dw = np.maximum(dw >> 4, 0).astype(np.int16)
    out = np.zeros((wp.shape[1], h, w), np.int16)
    for co in range(wp.shape[1]):
        for c in range(wp.shape[0]):
            out[co] += wp[c, co] * dw[c]
    return np.clip(out >> 6, 0, 255).astype(np.uint8)
