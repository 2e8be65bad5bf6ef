"""camera pipeline: hot pixel suppression, Bayer RGGB demosaic, colour correction, gamma ROM.

The stages of the thesis's camera pipeline (Halide-to-Hardware apps/camera_pipeline); its demosaic
is a simpler bilinear one.
raw (w+6) x (h+6) u8 Bayer mosaic (raw pixel (X, Y): red when X, Y both even,
blue when both odd, green otherwise) -> RGB (w, h, 3) u8 (numpy (3, h, w)).
hot pixel suppression: each pixel clamped to the range of its four same-colour
neighbours (two pixels away), u16;
demosaic: bilinear (cross / diagonal / horizontal / vertical averages, u16);
colour correction: i32 3x3 matrix with rows summing to 256, >> 8, clamp 0..255;
gamma: ROM curve[i] = i * (510 - i) / 255 (u32 arithmetic), indexed by data.
Accelerator: hw_input, denoised and demosaic are buffered stages, channels unrolled.
"""

from loom.frontends.pipeline import (Func, ImageParam, UInt8, Var, clamp, i32, maximum, minimum, select, u8, u16,
                                     u32)
from loom.frontends.pipeline.recipes import schedule_app, stream_through_accelerator
from loom.examples.pipelines._inputs import image_inputs

HALO = 6  # hot pixel suppression reads 2 pixels away, the demosaic 1 more
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
    dn = denoised
    ctr = dn[x + 1, y + 1]
    n, s, wv, e = dn[x + 1, y], dn[x + 1, y + 2], dn[x, y + 1], dn[x + 2, y + 1]
    nw, ne, sw, se = dn[x, y], dn[x + 2, y], dn[x, y + 2], dn[x + 2, y + 2]
    cross = (n + s + wv + e) >> 2
    diag = (nw + ne + sw + se) >> 2
    horiz = (wv + e) >> 1
    vert = (n + s) >> 1
    even_x = (x + 1) % 2 == 0  # raw X = x + 3: the same parity
    even_y = (y + 1) % 2 == 0
    red = even_x & even_y
    blue = ~even_x & ~even_y
    green = ~red & ~blue
    r_val = select(red, ctr, select(blue, diag, select(even_y, horiz, vert)))
    g_val = select(green, ctr, cross)
    b_val = select(blue, ctr, select(red, diag, select(even_y, vert, horiz)))
    demosaic = Func("demosaic")
    demosaic[x, y, c] = select(c == 0, r_val, select(c == 1, g_val, b_val))
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
    return dict(x=x, y=y, c=c, input=raw, hw_input=hw, denoised=denoised, demosaic=demosaic, ccm=ccm, corrected=corrected,
                curve=curve, output=output)


def cpu_schedule(a):
    a["demosaic"].compute_root()


def accel_schedule(a, tile=(32, 32), rate=1):
    stream_through_accelerator(a["output"], tile, buffered=[a["hw_input"], a["denoised"], a["demosaic"]],
                               roms=[a["curve"]],
                               rate=rate)


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
