"""camera pipeline: hot pixel suppression, Bayer RGGB demosaic, colour correction, gamma ROM.

The stages of the thesis's camera pipeline (Halide-to-Hardware apps/camera_pipeline), at full resolution
(the app deinterleaves the mosaic into four half-resolution planes first; the values are the same kind).
raw (w+8) x (h+8) u8 Bayer mosaic (raw pixel (X, Y): red when X, Y both even,
blue when both odd, green otherwise) -> RGB (w, h, 3) u8 (numpy (3, h, w)).
hot pixel suppression: each pixel clamped to the range of its four same-colour
neighbours (two pixels away), u16;
demosaic (after the app's): green at red and blue pixels averaged along the direction of the
smaller difference; red and blue as green plus the mean colour - green difference of the two
nearest same-colour neighbours (horizontal, vertical, or the diagonal of the smaller difference),
in i32, clamped to 0..255;
colour correction: i32 3x3 matrix with rows summing to 256, >> 8, clamp 0..255;
gamma: ROM curve[i] = i * (510 - i) / 255 (u32 arithmetic), indexed by data.
Accelerator: hw_input, denoised, green and demosaic are buffered stages, channels unrolled.
"""

from loom.frontends.pipeline import (Func, ImageParam, UInt8, Var, absolute, clamp, i32, maximum, minimum, select,
                                     u8, u16, u32)
from loom.frontends.pipeline.recipes import schedule_app, stream_through_accelerator
from loom.examples.pipelines._inputs import image_inputs

HALO = 8  # hot pixel suppression reads 2 pixels away, the demosaic 2 more (its green 1, then 1)
CCM = [[300, -30, -14], [-20, 290, -14], [-10, -40, 306]]


def algorithm():
    x, y, c, i, k = Var("x"), Var("y"), Var("c"), Var("i"), Var("k")
    raw = ImageParam(UInt8, 2, "input")
    hw = Func("hw_input")
    hw[x, y] = u16(raw[x, y])
    same = [hw[x + 2, y], hw[x + 2, y + 4], hw[x, y + 2], hw[x + 4, y + 2]]  # the same Bayer colour
    denoised = Func("denoised")
    denoised[x, y] = clamp(hw[x + 2, y + 2], minimum(minimum(same[0], same[1]), minimum(same[2], same[3])),
                           maximum(maximum(same[0], same[1]), maximum(same[2], same[3])))
    dn = denoised  # dn[x, y] is raw (x + 2, y + 2): the same Bayer parity as (x, y)
    # green everywhere: at a red or blue pixel, the average along the direction of the smaller difference
    c0, wv, e, n, s = dn[x + 1, y + 1], dn[x, y + 1], dn[x + 2, y + 1], dn[x + 1, y], dn[x + 1, y + 2]
    green = Func("green")  # centred on dn[x + 1, y + 1]
    smaller_h = absolute(i32(wv) - i32(e)) < absolute(i32(n) - i32(s))
    green[x, y] = select((x + 1) % 2 != (y + 1) % 2, c0, select(smaller_h, (wv + e) >> 1, (n + s) >> 1))

    def d(dx, dy):  # demosaic[x, y] is centred on dn[x + 2, y + 2] (raw (x + 4, y + 4))
        return i32(dn[x + 2 + dx, y + 2 + dy])

    def g(dx, dy):
        return i32(green[x + 1 + dx, y + 1 + dy])

    def colour_difference(a, b):  # green here, plus the mean colour - green difference of neighbours a, b
        return g(0, 0) - ((g(*a) + g(*b)) >> 1) + ((d(*a) + d(*b)) >> 1)

    horiz = colour_difference((-1, 0), (1, 0))
    vert = colour_difference((0, -1), (0, 1))
    diag = select(absolute(d(-1, -1) - d(1, 1)) < absolute(d(1, -1) - d(-1, 1)),
                  colour_difference((-1, -1), (1, 1)), colour_difference((1, -1), (-1, 1)))
    even_x, even_y = x % 2 == 0, y % 2 == 0
    red = even_x & even_y
    blue = ~even_x & ~even_y
    # at a green pixel of a red row, red is beside it and blue above and below; in a blue row the reverse
    r_val = select(red, d(0, 0), select(blue, diag, select(even_y, horiz, vert)))
    b_val = select(blue, d(0, 0), select(red, diag, select(even_y, vert, horiz)))
    demosaic = Func("demosaic")
    demosaic[x, y, c] = u16(clamp(select(c == 0, r_val, select(c == 1, g(0, 0), b_val)), 0, 255))
    ccm = Func("ccm")
    ccm[c, k] = 0
    for row in range(3):
        for col in range(3):
            ccm[row, col] = CCM[row][col]
    corrected = Func("corrected")
    corrected[x, y, c] = clamp((ccm[c, 0] * i32(demosaic[x, y, 0]) + ccm[c, 1] * i32(demosaic[x, y, 1]) +
                                ccm[c, 2] * i32(demosaic[x, y, 2])) >> 8, 0, 255)
    curve = Func("curve")
    curve[i] = u8(u32(i) * (u32(510) - u32(i)) / 255)
    curve.bound(i, 0, 256)
    output = Func("output")
    output[x, y, c] = curve[corrected[x, y, c]]
    return dict(x=x, y=y, c=c, input=raw, hw_input=hw, denoised=denoised, green=green, demosaic=demosaic, ccm=ccm,
                corrected=corrected, curve=curve, output=output)


def cpu_schedule(a):
    a["demosaic"].compute_root()


def accel_schedule(a, tile=(32, 32), rate=1):
    buffered = [a[n] for n in ("hw_input", "denoised", "green", "demosaic")]
    stream_through_accelerator(a["output"], tile, buffered=buffered, roms=[a["curve"]], rate=rate)


def build(schedule="accel", tile=(32, 32), rate=1):
    return schedule_app(algorithm(), schedule, cpu_schedule, accel_schedule, tile=tile, rate=rate)


def input_shape(size):
    w, h = size
    return (h + HALO, w + HALO)


make_inputs = image_inputs(input_shape)


def output_shape(size):
    return (*size, 3)  # RGB


if __name__ == "__main__":  # the design, its simulation and the CPU run, checked: ``loom pipeline camera_pipeline``
    from loom.cli import main

    raise SystemExit(main(["pipeline", "camera_pipeline", "--size", "32x32"]))
