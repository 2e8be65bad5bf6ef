"""Multi-channel 3x3 convolution layer (a DNN layer on the streaming accelerator).

out[x, y, co] = u8(min(max(sum_{ci, kx, ky} w[ci, co, kx, ky] * in[x+kx, y+ky, ci] >> 6, 0), 255))
in i16, with constant integer weights. Input (w+2) x (h+2) x CI u8 (numpy shape
(CI, h+2, w+2)) -> output w x h x CO u8. The accelerator computes one output
pixel (all CO channels, 9*CI*CO multiply-accumulates) per cycle: the channel
dimensions and the reduction are fully unrolled. ``build(ci_unroll=n)`` instead
iterates the input channels in time: ``conv`` gets its own buffer, 9*n*CO
multiply-accumulates per cycle, CI/n cycles per output pixel, partial sums in
an accumulation register.
"""

import numpy as np

from loom.frontends.pipeline import Func, ImageParam, IterLevel, RDom, UInt8, Var, clamp, i16, u8
from loom.frontends.pipeline.recipes import schedule_app
from loom.examples.pipelines._inputs import image_inputs

HALO = 2
CI, CO = 3, 4


def weights():
    rng = np.random.default_rng(42)
    return rng.integers(-8, 9, size=(CI, CO, 3, 3)).astype(np.int16)  # [ci, co, kx, ky]


def algorithm():
    x, y, c, co, ci, kx, ky = (Var(n) for n in ("x", "y", "c", "co", "ci", "kx", "ky"))
    inp = ImageParam(UInt8, 3, "input")
    hw_input = Func("hw_input")
    hw_input[x, y, c] = i16(inp[x, y, c])
    w = weights()
    wf = Func("weights")
    wf[ci, co, kx, ky] = i16(0)
    for a in range(CI):
        for b in range(CO):
            for i in range(3):
                for j in range(3):
                    wf[a, b, i, j] = i16(int(w[a, b, i, j]))
    r = RDom(0, 3, 0, 3, 0, CI, name="r")
    conv = Func("conv")
    conv[x, y, co] = i16(0)
    conv[x, y, co] += wf[r.z, co, r.x, r.y] * hw_input[x + r.x, y + r.y, r.z]
    output = Func("output")
    output[x, y, co] = u8(clamp(conv[x, y, co] >> 6, 0, 255))
    return dict(x=x, y=y, c=c, co=co, input=inp, hw_input=hw_input, weights=wf, conv=conv, output=output, r=r)


def cpu_schedule(a):
    a["conv"].compute_root()


def accel_schedule(a, tile=(16, 16), ci_unroll=None):
    """The declarative schedule (thesis §3.6): the same design as ``imperative_schedule``."""
    x, y, output, r = a["x"], a["y"], a["output"], a["r"]
    cgra = IterLevel("CGRA", [(x, tile[0]), (y, tile[1])])
    if ci_unroll is None:  # the whole reduction in one cycle: one output pixel (all channels) per cycle
        output.output_rate(1)
    output.iteration_order([cgra, IterLevel("host")]).accelerate("CGRA")
    in_time = [] if ci_unroll is None else [a["conv"]]  # the channel reduction iterated in time
    output.create_memories([a["hw_input"], *in_time], output.get_looplevel("CGRA", x))
    if ci_unroll is not None:
        a["conv"].update(0).unroll(r.x).unroll(r.y).unroll(r.z, ci_unroll)


def imperative_schedule(a, tile=(16, 16), ci_unroll=None):
    """The same schedule in the original primitives."""
    xo, yo, xi, yi = Var("xo"), Var("yo"), Var("xi"), Var("yi")
    output, hw_input, conv, r = a["output"], a["hw_input"], a["conv"], a["r"]
    output.tile(a["x"], a["y"], xo, yo, xi, yi, tile[0], tile[1])
    output.unroll(a["co"])
    output.hw_accelerate(xi, xo)
    hw_input.compute_at(output, xo)
    hw_input.unroll(a["c"])
    if ci_unroll is None:
        conv.update(0).unroll(r.x).unroll(r.y).unroll(r.z)
    else:
        conv.compute_at(output, xo)
        conv.unroll(a["co"])
        conv.update(0).unroll(r.x).unroll(r.y).unroll(r.z, ci_unroll)


def build(schedule="accel", tile=(16, 16), ci_unroll=None):
    args = dict(tile=tile) if ci_unroll is None else dict(tile=tile, ci_unroll=ci_unroll)
    return schedule_app(algorithm(), schedule, cpu_schedule, accel_schedule, **args)


def input_shape(size):
    w, h = size
    return (CI, h + HALO, w + HALO)


make_inputs = image_inputs(input_shape)


def output_shape(size):
    return (*size, CO)  # one plane per output channel


if __name__ == "__main__":  # the design, its simulation and the CPU run, checked: ``loom pipeline conv_layer``
    from loom.cli import main

    raise SystemExit(main(["pipeline", "conv_layer", "--size", "16x16"]))
