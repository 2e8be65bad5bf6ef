"""pointwise: out = u8(min((3 * u16(in)) >> 1, 255)); no halo, every buffer is a wire."""

from loom.frontends.pipeline import Func, ImageParam, UInt8, Var, minimum, u8, u16
from loom.frontends.pipeline.recipes import schedule_app, stream_through_accelerator
from loom.examples.pipelines._inputs import image_inputs

HALO = 0


def algorithm():
    x, y = Var("x"), Var("y")
    inp = ImageParam(UInt8, 2, "input")
    hw_input = Func("hw_input")
    hw_input[x, y] = u16(inp[x, y])
    scaled = Func("scaled")
    scaled[x, y] = (hw_input[x, y] * 3) >> 1
    output = Func("output")
    output[x, y] = u8(minimum(scaled[x, y], 255))
    return dict(x=x, y=y, input=inp, hw_input=hw_input, scaled=scaled, output=output)


def cpu_schedule(a):
    a["output"].vectorize(a["x"], 16)


def accel_schedule(a, tile=(64, 64), rate=1):
    stream_through_accelerator(a["output"], tile, buffered=[a["hw_input"]], rate=rate)


def build(schedule="accel", tile=(64, 64), rate=1):
    return schedule_app(algorithm(), schedule, cpu_schedule, accel_schedule, tile=tile, rate=rate)


def input_shape(size):
    w, h = size
    return (h, w)


make_inputs = image_inputs(input_shape)


def output_shape(size):
    return tuple(size)


if __name__ == "__main__":  # the design, its simulation and the CPU run, checked: ``loom pipeline pointwise``
    from loom.cli import main

    raise SystemExit(main(["pipeline", "pointwise", "--size", "64x64"]))
