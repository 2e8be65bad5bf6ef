"""tone_map: local contrast in floating point (f32 kernels between u8 images).

lum = f32(in) / 255; blur = 3x3 binomial blur of lum (weights 1, 2, 4 over 16); detail = lum - blur;
out = u8(clamp(floor(255 sqrt(blur) (1 + 2 detail) + 0.5), 0, 255)): a gamma-lifted base with its detail doubled.
Every kernel between the input and the output's cast computes in f32 (on the accelerator: the RTL's IEEE
functions, loom.streaming.verilog_float).
Input (w+2) x (h+2) u8 (numpy shape (h+2, w+2)) -> output (h, w) u8.
"""

from loom.frontends.pipeline import Func, ImageParam, UInt8, Var, clamp, f32, floor, i16, sqrt, u8
from loom.frontends.pipeline.recipes import schedule_app, stream_through_accelerator
from loom.examples.pipelines._inputs import image_inputs

HALO = 2


def algorithm():
    x, y = Var("x"), Var("y")
    inp = ImageParam(UInt8, 2, "input")
    lum = Func("lum")
    lum[x, y] = f32(inp[x, y]) / 255.0
    blur_x = Func("blur_x")
    blur_x[x, y] = (lum[x, y] + 2.0 * lum[x + 1, y] + lum[x + 2, y]) * 0.25
    blur = Func("blur")
    blur[x, y] = (blur_x[x, y] + 2.0 * blur_x[x, y + 1] + blur_x[x, y + 2]) * 0.25
    output = Func("output")
    detail = lum[x + 1, y + 1] - blur[x, y]
    lifted = 255.0 * sqrt(blur[x, y]) * (1.0 + 2.0 * detail)
    output[x, y] = u8(i16(clamp(floor(lifted + 0.5), 0.0, 255.0)))
    return dict(x=x, y=y, input=inp, lum=lum, blur_x=blur_x, blur=blur, output=output)


def cpu_schedule(a):
    a["blur_x"].compute_root()


def accel_schedule(a, tile=(62, 62), rate=1):
    stream_through_accelerator(a["output"], tile, buffered=[a["lum"], a["blur_x"], a["blur"]], rate=rate)


def build(schedule="accel", tile=(62, 62), rate=1):
    return schedule_app(algorithm(), schedule, cpu_schedule, accel_schedule, tile=tile, rate=rate)


def input_shape(size):
    w, h = size
    return (h + HALO, w + HALO)


make_inputs = image_inputs(input_shape)


def output_shape(size):
    return size


if __name__ == "__main__":  # the design, its simulation and the CPU run, checked: ``loom pipeline tone_map``
    from loom.cli import main

    raise SystemExit(main(["pipeline", "tone_map", "--size", "62x62"]))
