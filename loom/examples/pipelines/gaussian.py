"""gaussian: 3x3 blur with sigma-1.5 weights normalised to 256, in u16.

Weights [[24,30,24],[30,37,30],[24,30,24]] (sum 253), sum then / 256.
Input (w+2) x (h+2) u8 -> output w x h u8.
"""

from loom.frontends.pipeline import Func, ImageParam, RDom, UInt8, Var, u8, u16
from loom.frontends.pipeline.recipes import compute_in_tiles, schedule_app, stream_through_accelerator
from loom.examples.pipelines._inputs import image_inputs

HALO = 2
WEIGHTS = [[24, 30, 24], [30, 37, 30], [24, 30, 24]]


def algorithm():
    x, y = Var("x"), Var("y")
    inp = ImageParam(UInt8, 2, "input")
    kernel = Func("kernel")
    kernel[x, y] = u16(0)
    for i in range(3):
        for j in range(3):
            kernel[i, j] = u16(WEIGHTS[j][i])
    hw_input = Func("hw_input")
    hw_input[x, y] = u16(inp[x, y])
    win = RDom(0, 3, 0, 3, name="win")
    blur_unnormalized = Func("blur_unnormalized")
    blur_unnormalized[x, y] = u16(0)
    blur_unnormalized[x, y] += kernel[win.x, win.y] * hw_input[x + win.x, y + win.y]
    blur = Func("blur")
    blur[x, y] = blur_unnormalized[x, y] / 256
    output = Func("output")
    output[x, y] = u8(blur[x, y])
    return dict(x=x, y=y, input=inp, kernel=kernel, hw_input=hw_input, blur_unnormalized=blur_unnormalized,
                blur=blur, output=output, win=win)


def cpu_schedule(a, tile=(64, 64)):
    compute_in_tiles(a["output"], tile, [a["hw_input"]])


def accel_schedule(a, tile=(62, 62), rate=1):
    stream_through_accelerator(a["output"], tile, buffered=[a["hw_input"]], reductions=[a["blur_unnormalized"]],
                               rate=rate)


def build(schedule="accel", tile=(62, 62), rate=1):
    return schedule_app(algorithm(), schedule, cpu_schedule, accel_schedule, tile=tile, rate=rate)


def input_shape(size):
    w, h = size
    return (h + HALO, w + HALO)


make_inputs = image_inputs(input_shape)


def output_shape(size):
    return tuple(size)


if __name__ == "__main__":  # the design, its simulation and the CPU run, checked: ``loom pipeline gaussian``
    from loom.cli import main

    raise SystemExit(main(["pipeline", "gaussian", "--size", "62x62"]))
