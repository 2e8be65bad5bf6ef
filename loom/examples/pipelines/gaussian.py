"""gaussian: 3x3 blur with sigma-1.5 weights normalised to 256, in u16.

Weights [[24,30,24],[30,37,30],[24,30,24]] (sum 253), sum then / 256.
Input (w+2) x (h+2) u8 -> output w x h u8.
"""

from loom.frontends.pipeline import Func, ImageParam, IterLevel, RDom, UInt8, Var, u8, u16
from loom.frontends.pipeline.recipes import compute_in_tiles, schedule_app
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
    """The declarative schedule (thesis §3.6): the same design as ``imperative_schedule``."""
    x, y, output = a["x"], a["y"], a["output"]
    cgra = IterLevel("CGRA", [(x, tile[0]), (y, tile[1])])
    output.output_rate(rate).iteration_order([cgra, IterLevel("host")]).accelerate("CGRA")
    output.create_memories([a["hw_input"]], output.get_looplevel("CGRA", x))


def imperative_schedule(a, tile=(62, 62), rate=1):
    """The same schedule in the original primitives (kept to compare designs and lines of schedule)."""
    xo, yo, xi, yi = Var("xo"), Var("yo"), Var("xi"), Var("yi")
    output, hw_input = a["output"], a["hw_input"]
    output.tile(a["x"], a["y"], xo, yo, xi, yi, tile[0], tile[1])
    output.hw_accelerate(xi, xo)
    hw_input.compute_at(output, xo)
    a["blur_unnormalized"].update().unroll(a["win"].x).unroll(a["win"].y)
    if rate > 1:
        output.unroll(xi, rate)
        hw_input.unroll(a["x"], rate)


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
