"""mobilenet_separable: a MobileNet depthwise-separable convolution (3x3 depthwise, ReLU, 1x1 pointwise), in i16.

dw[x, y, c] = max((sum_{kx, ky} wd[c, kx, ky] * in[x+kx, y+ky, c]) >> 4, 0)
out[x, y, co] = u8(clamp((sum_c wp[c, co] * dw[x, y, c]) >> 6, 0, 255))
with constant integer weights. Input (w+2) x (h+2) x C u8 (numpy shape (C, h+2, w+2)) -> output w x h x CO u8.
``build("accel", tile)`` buffers hw_input and dw; channels are computed in space (every channel of a pixel
per cycle), the depthwise and pointwise reductions fully unrolled.
"""

import numpy as np

from loom.frontends.pipeline import Func, ImageParam, RDom, UInt8, Var, clamp, i16, maximum, u8
from loom.frontends.pipeline.recipes import schedule_app, stream_through_accelerator
from loom.examples.pipelines._inputs import image_inputs

HALO = 2
C, CO = 4, 4


def weights():
    """(depthwise [c, kx, ky], pointwise [c, co]) as i16."""
    rng = np.random.default_rng(7)
    return (rng.integers(-4, 9, size=(C, 3, 3)).astype(np.int16), rng.integers(-8, 9, size=(C, CO)).astype(np.int16))


def _table(name, values, dims):
    f = Func(name)
    f[tuple(dims)] = i16(0)
    for idx in np.ndindex(values.shape):
        f[idx] = i16(int(values[idx]))
    return f


def algorithm():
    x, y, c, co, a, b, d = (Var(n) for n in ("x", "y", "c", "co", "a", "b", "d"))
    inp = ImageParam(UInt8, 3, "input")
    hw_input = Func("hw_input")
    hw_input[x, y, c] = i16(inp[x, y, c])
    wd_values, wp_values = weights()
    wd, wp = _table("w_depthwise", wd_values, (a, b, d)), _table("w_pointwise", wp_values, (a, b))
    k = RDom(0, 3, 0, 3, name="k")
    dw_sum = Func("dw_sum")
    dw_sum[x, y, c] = i16(0)
    dw_sum[x, y, c] += wd[c, k.x, k.y] * hw_input[x + k.x, y + k.y, c]
    dw = Func("dw")
    dw[x, y, c] = maximum(dw_sum[x, y, c] >> 4, i16(0))
    rc = RDom(0, C, name="rc")
    pw = Func("pw")
    pw[x, y, co] = i16(0)
    pw[x, y, co] += wp[rc.x, co] * dw[x, y, rc.x]
    output = Func("output")
    output[x, y, co] = u8(clamp(pw[x, y, co] >> 6, 0, 255))
    return dict(x=x, y=y, c=c, co=co, input=inp, hw_input=hw_input, w_depthwise=wd, w_pointwise=wp, dw_sum=dw_sum,
                dw=dw, pw=pw, output=output, k=k, rc=rc)


def cpu_schedule(a):
    a["dw"].compute_root()


def accel_schedule(a, tile=(16, 16)):
    stream_through_accelerator(a["output"], tile, buffered=[a["hw_input"], a["dw"]],
                               reductions=[a["dw_sum"], a["pw"]])


def build(schedule="accel", tile=(16, 16)):
    return schedule_app(algorithm(), schedule, cpu_schedule, accel_schedule, tile=tile)


def input_shape(size):
    w, h = size
    return (C, h + HALO, w + HALO)


make_inputs = image_inputs(input_shape)


def output_shape(size):
    return (*size, CO)  # one plane per output channel


if __name__ == "__main__":  # the design, its simulation and the CPU run: ``loom pipeline mobilenet_separable``
    from loom.cli import main

    raise SystemExit(main(["pipeline", "mobilenet_separable", "--size", "16x16"]))
