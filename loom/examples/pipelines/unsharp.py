"""unsharp mask on RGB with a reciprocal ROM (after the Halide-to-Hardware app).

gray = (77 r + 150 g + 29 b) >> 8; blur = 7x7 Gaussian (sigma 1.5, integer
weights summing to 4096) of gray, >> 12; sharpen = clamp(2 gray - blur, 0, 255);
ratio = sharpen * reciprocal[gray] with the ROM reciprocal[i] = 256 / max(i, 1);
out[c] = u8(min((ratio * in[c]) >> 8, 255)) in u32.
Input (w+6) x (h+6) x 3 u8 (numpy shape (3, h+6, w+6)) -> output (3, h, w) u8.
The channel dimension is unrolled (3 values per cycle).
"""

import math

from loom.frontends.pipeline import (Func, ImageParam, RDom, UInt8, Var, clamp, i16, maximum,
                                     minimum, u8, u16, u32)
from loom.frontends.pipeline.recipes import schedule_app, stream_through_accelerator
from loom.examples.pipelines._inputs import image_inputs

HALO = 6


def gaussian_weights_7x7(sigma=1.5, total=4096):
    g = [math.exp(-((i - 3) ** 2) / (2 * sigma * sigma)) for i in range(7)]
    s = sum(g)
    w1 = [v / s for v in g]
    w = [[round(total * a * b) for a in w1] for b in w1]
    w[3][3] += total - sum(map(sum, w))  # exact normalisation
    return w


WEIGHTS = gaussian_weights_7x7()


def algorithm():
    x, y, c, i = Var("x"), Var("y"), Var("c"), Var("i")
    inp = ImageParam(UInt8, 3, "input")
    hw_input = Func("hw_input")
    hw_input[x, y, c] = u16(inp[x, y, c])
    gray = Func("gray")
    gray[x, y] = (u16(77) * hw_input[x, y, 0] + u16(150) * hw_input[x, y, 1] + u16(29) * hw_input[x, y, 2]) >> 8
    kernel = Func("kernel")
    kernel[x, y] = u32(0)
    for a in range(7):
        for b in range(7):
            kernel[a, b] = u32(WEIGHTS[b][a])
    win = RDom(0, 7, 0, 7, name="win")
    blur_sum = Func("blur_sum")
    blur_sum[x, y] = u32(0)
    blur_sum[x, y] += kernel[win.x, win.y] * u32(gray[x + win.x, y + win.y])
    blur = Func("blur")
    blur[x, y] = u16(blur_sum[x, y] >> 12)
    sharpen = Func("sharpen")
    sharpen[x, y] = u16(clamp(i16(2) * i16(gray[x + 3, y + 3]) - i16(blur[x, y]), 0, 255))
    reciprocal = Func("reciprocal")
    reciprocal[i] = u16(256) / maximum(u16(i), 1)
    reciprocal.bound(i, 0, 256)
    ratio = Func("ratio")
    ratio[x, y] = sharpen[x, y] * reciprocal[gray[x + 3, y + 3]]
    output = Func("output")
    output[x, y, c] = u8(minimum((u32(ratio[x, y]) * u32(hw_input[x + 3, y + 3, c])) >> 8, 255))
    return dict(x=x, y=y, c=c, input=inp, hw_input=hw_input, gray=gray, kernel=kernel, blur_sum=blur_sum,
                blur=blur, sharpen=sharpen, reciprocal=reciprocal, ratio=ratio, output=output, win=win)


def cpu_schedule(a):
    a["gray"].compute_root()
    a["blur"].compute_root()


def accel_schedule(a, tile=(58, 58), rate=1):
    stream_through_accelerator(a["output"], tile, buffered=[a["hw_input"], a["gray"], a["blur"]],
                               reductions=[a["blur_sum"]], roms=[a["reciprocal"]], rate=rate)


def build(schedule="accel", tile=(58, 58), rate=1):
    return schedule_app(algorithm(), schedule, cpu_schedule, accel_schedule, tile=tile, rate=rate)


def input_shape(size):
    w, h = size
    return (3, h + HALO, w + HALO)


make_inputs = image_inputs(input_shape)


def output_shape(size):
    return (*size, 3)  # RGB


if __name__ == "__main__":  # the design, its simulation and the CPU run, checked: ``loom pipeline unsharp``
    from loom.cli import main

    raise SystemExit(main(["pipeline", "unsharp", "--size", "58x58"]))
