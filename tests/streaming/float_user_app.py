"""A user's float app for ``loom pipeline ./app.py`` (test_verilog_float): a soft threshold of a gradient with
abs, select, a compare and a division, f32 image in and out; its inputs hold a NaN, an infinity and -0.0."""
import numpy as np
from loom.frontends.pipeline import Float32, Func, ImageParam, Var, select, abs as pabs, sqrt
from loom.frontends.pipeline.recipes import schedule_app, stream_through_accelerator


def algorithm():
    x, y = Var("x"), Var("y")
    inp = ImageParam(Float32, 2, "input")
    hw = Func("hw")
    hw[x, y] = inp[x, y]
    grad = Func("grad")
    grad[x, y] = hw[x + 1, y] - hw[x, y]
    out = Func("output")
    g = grad[x, y]
    out[x, y] = select(pabs(g) > 0.5, g / (1.0 + pabs(g)), -g * 0.25) + sqrt(pabs(hw[x, y]))
    return dict(input=inp, hw=hw, grad=grad, output=out)



def cpu_schedule(a):
    pass


def accel_schedule(a, tile=(16, 8), rate=1):
    stream_through_accelerator(a["output"], tile, buffered=[a["hw"]], rate=rate)


def build(schedule="accel", tile=(16, 8), rate=1):
    return schedule_app(algorithm(), schedule, cpu_schedule, accel_schedule, tile=tile, rate=rate)


def make_inputs(size, rng):
    w, h = size
    img = (rng.standard_normal((h, w + 1)) * 3).astype(np.float32)
    img[0, 0], img[1, 1], img[2, 2] = np.nan, np.inf, -0.0
    return {"input": img}


def output_shape(size):
    return size
