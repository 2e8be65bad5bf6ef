"""Channel-tiled convolution layer (a DNN layer with the channel reduction iterated in time).

out[x, y, co] = u8(min(max(sum_{ci, kx, ky} w[ci, co, kx, ky] * in[s*x+kx, s*y+ky, ci] >> 6, 0), 255)),
in i16, constant integer weights, kernel ``k`` x ``k`` (``k=1``: pointwise), stride ``s``. Input numpy
shape (ci, s*(h-1)+k, s*(w-1)+k) -> output w x h x co. On the accelerator one invocation computes a
spatial tile for ``co`` output channels, all in space (the output rate in channels per cycle); the
reduction runs in time: ``ci_tile`` input channels per cycle, the k*k taps and the ci/ci_tile channel
tiles one after another (k*k*ci/ci_tile cycles per output pixel, partial sums in an accumulation
register), so the input channel tiles are consumed in sequence as the thesis's GLB streams them
(§6.4). A layer with more output channels runs one invocation per output-channel tile
(``_thesis.thesis_report`` sums them for Table 6.7). The input memory ``hw_input`` fills ``input_rate``
pixels (all channels) per output step (``hw_input.unroll(x, input_rate)``: its own time grid along x, one
pixel every floor(steps / input_rate) cycles, its rows keeping pace with the output's): one for stride 1; for stride s > 1 by default the fewest that fill
the s input rows of an output row within that row (``fast_input_rate``), since otherwise a stride-s layer is
input bound (the input keeps pace along x, s pixels per output pixel, but an output row waits for s input rows).
"""

import numpy as np

from loom.errors import LoomError
from loom.frontends.pipeline import Func, ImageParam, IterLevel, RDom, UInt8, Var, clamp, i16, u8
from loom.frontends.pipeline.recipes import schedule_app

K, STRIDE, CI, CO, CI_TILE = 3, 1, 4, 2, 2


def _check(k, stride, ci, co, ci_tile, input_rate=1):
    for name, v in (("k", k), ("stride", stride), ("ci", ci), ("co", co), ("ci_tile", ci_tile),
                    ("input_rate", input_rate)):
        if not isinstance(v, int) or v < 1:
            raise LoomError(f"dnn_conv parameter {name} must be a positive integer, got {v!r}",
                            where=f"dnn_conv.build({name}=)")
    if ci % ci_tile:
        raise LoomError(f"dnn_conv: the channel tile ci_tile={ci_tile} does not divide the {ci} input channels",
                        where="dnn_conv.build(ci_tile=)")


def weights(k=K, ci=CI, co=CO):
    rng = np.random.default_rng(42)
    return rng.integers(-8, 9, size=(ci, co, k, k)).astype(np.int16)  # [ci, co, kx, ky]


def algorithm(k=K, stride=STRIDE, ci=CI, co=CO):
    x, y, c, oc = Var("x"), Var("y"), Var("c"), Var("co")
    inp = ImageParam(UInt8, 3, "input")
    hw_input = Func("hw_input")
    hw_input[x, y, c] = i16(inp[x, y, c])
    w = weights(k, ci, co)
    wf = Func("weights")
    a, b, i, j = Var("a"), Var("b"), Var("i"), Var("j")
    wf[a, b, i, j] = i16(0)
    for p in range(ci):
        for q in range(co):
            for u in range(k):
                for v in range(k):
                    wf[p, q, u, v] = i16(int(w[p, q, u, v]))
    r = RDom(0, k, 0, k, 0, ci, name="r")
    conv = Func("conv")
    conv[x, y, oc] = i16(0)
    conv[x, y, oc] += wf[r.z, oc, r.x, r.y] * hw_input[stride * x + r.x, stride * y + r.y, r.z]
    output = Func("output")
    output[x, y, oc] = u8(clamp(conv[x, y, oc] >> 6, 0, 255))
    return dict(x=x, y=y, c=c, co=oc, input=inp, hw_input=hw_input, weights=wf, conv=conv, output=output, r=r)


def cpu_schedule(a):
    a["conv"].compute_root()


def fast_input_rate(width, k=K, stride=STRIDE):
    """Input pixels per output step that keep a ``width``-wide output tile compute bound: the s input rows of
    an output row, ``s * (width - 1) + k`` pixels each at n per step, fill within its ``width`` steps."""
    if stride == 1:
        return 1  # the input row is the output row plus the halo: one pixel per step keeps pace but for it
    return -(-stride * (stride * (width - 1) + k) // width)


def input_channel_block(k=K, ci=CI, ci_tile=CI_TILE, input_rate=1) -> int:
    """Input channels the input memory writes a cycle: ``ci_tile`` (what the reduction reads a cycle) when a
    pixel's channel blocks fit the q = floor(R / input_rate) cycles between its pixels (R = k*k*ci/ci_tile cycles
    per output), else the fewest more that do (a divisor of ci; all of them when it writes several pixels a cycle)."""
    q = k * k * ci // ci_tile // input_rate
    return next((b for b in range(ci_tile, ci + 1) if ci % b == 0 and ci // b <= q), ci)


def accel_schedule(a, tile=(8, 8), ci_tile=CI_TILE, input_rate=1, k=K, ci=CI, input_channels=None):
    x, y, output = a["x"], a["y"], a["output"]
    cgra = IterLevel("CGRA", [(x, tile[0]), (y, tile[1])])
    output.iteration_order([cgra, IterLevel("host")]).accelerate("CGRA")
    level = output.get_looplevel("CGRA", x)
    output.create_memories([a["conv"]], level)
    # the GLB streams a channel block a cycle, the blocks of a pixel one after another
    block = input_channels or input_channel_block(k, ci, ci_tile, input_rate)
    a["hw_input"].compute_at(level).unroll(a["c"], *([block] if block < ci else []))
    a["conv"].update(0).unroll(a["r"].z, ci_tile)  # taps and channel tiles in time, ci_tile channels in space
    if input_rate > 1:  # the input memory fills on its own time grid, faster than the compute reads it
        a["hw_input"].unroll(x, input_rate)


def build(schedule="accel", tile=(8, 8), k=K, stride=STRIDE, ci=CI, co=CO, ci_tile=CI_TILE, input_rate=None,
          input_channels=None):
    """``input_rate``: input pixels per output step (None: ``fast_input_rate`` of the tile width);
    ``input_channels``: channels the input memory writes a cycle (None: ``input_channel_block``)."""
    if input_rate is None:
        _check(k, stride, ci, co, ci_tile)
        input_rate = fast_input_rate(tile[0], k, stride)
    _check(k, stride, ci, co, ci_tile, input_rate)
    if input_channels is not None and (not isinstance(input_channels, int) or input_channels < 1
                                       or ci % input_channels):
        raise LoomError(f"dnn_conv: input_channels={input_channels!r} must be a positive divisor of the {ci} input "
                        "channels", where="dnn_conv.build(input_channels=)")
    return schedule_app(algorithm(k, stride, ci, co), schedule, cpu_schedule, accel_schedule, tile=tile,
                        ci_tile=ci_tile, input_rate=input_rate, k=k, ci=ci, input_channels=input_channels)


def input_shape(size, k=K, stride=STRIDE, ci=CI):
    w, h = size
    return (ci, stride * (h - 1) + k, stride * (w - 1) + k)


def make_inputs(size, rng, k=K, stride=STRIDE, ci=CI):
    return {"input": rng.integers(0, 256, input_shape(size, k, stride, ci), dtype=np.uint8)}


def output_shape(size, co=CO):
    return (*size, co)


if __name__ == "__main__":  # the design, its simulation and the CPU run, checked: ``loom pipeline dnn_conv``
    from loom.cli import main

    raise SystemExit(main(["pipeline", "dnn_conv", "--size", "8x8"]))
