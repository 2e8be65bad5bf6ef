"""cascade (thesis Code 3.1): two 3x3 [1 2 1; 2 4 2; 1 2 1]/16 convolutions in u16.

Input (w+4) x (h+4) u8 -> output w x h u8.
``build("accel", tile)`` gives the accelerator schedule at 1 pixel/cycle with
buffers hw_input and conv1 (``rate=n``: n pixels/cycle); ``build("cpu")`` a tiled CPU schedule.
``build("accel", share="pixel" | "line" | "block")`` is the thesis's shared form (§5, Table 5.1):
conv1 and conv2 as two identical stages (3x3 sum, / 16) time-multiplexed on one kernel,
output = u8(conv2); the same values as the plain algorithm.
"""

from loom.errors import LoomError
from loom.frontends.pipeline import Func, ImageParam, MemoryType, RDom, UInt8, Var, u8, u16
from loom.frontends.pipeline.recipes import compute_in_tiles, schedule_app, share_kernels, stream_through_accelerator
from loom.examples.pipelines._inputs import image_inputs

HALO = 4
WEIGHTS = [[1, 2, 1], [2, 4, 2], [1, 2, 1]]


def _weights(x, y):
    kernel = Func("kernel")
    kernel[x, y] = 0
    for i in range(3):
        for j in range(3):
            kernel[i, j] = WEIGHTS[j][i]
    return kernel


def algorithm():
    x, y = Var("x"), Var("y")
    inp = ImageParam(UInt8, 2, "input")
    kernel = _weights(x, y)
    hw_input = Func("hw_input")
    hw_input[x, y] = u16(inp[x, y])
    r, r2 = RDom(0, 3, 0, 3, name="r"), RDom(0, 3, 0, 3, name="r2")
    conv1 = Func("conv1")
    conv1[x, y] = u16(0)
    conv1[x, y] += u16(kernel[r.x, r.y]) * hw_input[x + r.x, y + r.y]
    conv1_norm = Func("conv1_norm")
    conv1_norm[x, y] = conv1[x, y] / 16
    conv2 = Func("conv2")
    conv2[x, y] = u16(0)
    conv2[x, y] += u16(kernel[r2.x, r2.y]) * conv1_norm[x + r2.x, y + r2.y]
    output = Func("output")
    output[x, y] = u8(conv2[x, y] / 16)
    return dict(x=x, y=y, input=inp, kernel=kernel, hw_input=hw_input, conv1=conv1, conv1_norm=conv1_norm,
                conv2=conv2, output=output, r=r, r2=r2)


def shared_algorithm():
    """Thesis form for compute sharing: conv_k = (sum of weights * previous level) / 16, identical kernels."""
    x, y = Var("x"), Var("y")
    inp = ImageParam(UInt8, 2, "input")
    kernel = _weights(x, y)
    hw_input = Func("hw_input")
    hw_input[x, y] = u16(inp[x, y])
    out = dict(x=x, y=y, input=inp, kernel=kernel, hw_input=hw_input)
    src = hw_input
    for k in (1, 2):
        r = RDom(0, 3, 0, 3, name=f"r{k}")
        total, conv = Func(f"sum{k}"), Func(f"conv{k}")
        total[x, y] = u16(0)
        total[x, y] += u16(kernel[r.x, r.y]) * src[x + r.x, y + r.y]
        conv[x, y] = total[x, y] / 16
        out.update({f"sum{k}": total, f"conv{k}": conv, f"r{k}": r})
        src = conv
    output = Func("output")
    output[x, y] = u8(src[x, y])
    out["output"] = output
    return out


def shared_schedule(a, tile=(60, 60), share="line"):
    loops = stream_through_accelerator(a["output"], tile, buffered=[a["hw_input"], a["conv1"], a["conv2"]],
                                       reductions=[a["sum1"], a["sum2"]])
    share_kernels([a["conv1"], a["conv2"]], share, loops)


def cpu_schedule(a, tile=(32, 32)):
    compute_in_tiles(a["output"], tile, [a["conv1"]])


def accel_schedule(a, tile=(60, 60), rate=1):
    stream_through_accelerator(a["output"], tile, buffered=[a["hw_input"], a["conv1"]],
                               reductions=[a["conv1"], a["conv2"]], rate=rate)


def glb_schedule(a, glb_tile=(360, 360), tile=(60, 60)) -> Func:
    """Thesis Code 3.6: GLB tiles of ``glb_tile`` feed fabric tiles of ``tile``; returns the pipeline output.

    ``output.in_()`` is the accelerator output (one invocation = one GLB tile), ``output`` is stored in the
    GLB and tiled again for the fabric; ``hw_input.in_()`` is the GLB copy of the input and
    ``hw_input.in_().in_()`` the memory-tile copy the fabric's first convolution reads."""
    x, y = a["x"], a["y"]
    xo, yo, xi, yi = Var("xo"), Var("yo"), Var("xi"), Var("yi")
    xio, yio, xii, yii = Var("xio"), Var("yio"), Var("xii"), Var("yii")
    hw_output = a["output"]
    out_glb = hw_output.in_()
    out_glb.compute_root().tile(x, y, xo, yo, xi, yi, *glb_tile).hw_accelerate(xi, xo)
    hw_output.tile(x, y, xio, yio, xii, yii, *tile).compute_at(out_glb, xo).store_in(MemoryType.GLB)
    a["conv1"].compute_at(hw_output, xio)  # the buffered stage (the thesis buffers conv1_norm's values)
    a["conv1"].update().unroll(a["r"].x).unroll(a["r"].y)
    a["conv2"].update().unroll(a["r2"].x).unroll(a["r2"].y)
    a["hw_input"].in_().in_().compute_at(hw_output, xio).store_in(MemoryType.MemoryTile)
    a["hw_input"].in_().compute_at(out_glb, xo).store_in(MemoryType.GLB)
    a["hw_input"].accelerator_input()
    return out_glb


def build(schedule="accel", tile=(60, 60), rate=1, glb_tile=None, share=None):
    """``glb_tile=(w, h)``: the two-level hierarchy of thesis Code 3.6 (GLB tiles of fabric tiles);
    ``share``: the compute-sharing form (thesis §5) interleaved by "pixel", "line" or "block"."""
    if share is not None:
        if rate != 1 or glb_tile is not None:
            raise LoomError("the shared cascade runs at 1 pixel per cycle on one level of tiles",
                            where="cascade.build")
        return schedule_app(shared_algorithm(), schedule, cpu_schedule, shared_schedule, tile=tile, share=share)
    if schedule == "accel" and glb_tile is not None:
        if rate != 1:
            raise LoomError("the Code 3.6 schedule runs at 1 pixel per cycle", where="cascade.build")
        a = algorithm()
        return glb_schedule(a, glb_tile, tile), a
    return schedule_app(algorithm(), schedule, cpu_schedule, accel_schedule, tile=tile, rate=rate)


def input_shape(size):
    w, h = size
    return (h + HALO, w + HALO)


make_inputs = image_inputs(input_shape)


def output_shape(size):
    return tuple(size)


if __name__ == "__main__":  # the design, its simulation and the CPU run, checked: ``loom pipeline cascade``
    from loom.cli import main

    raise SystemExit(main(["pipeline", "cascade", "--size", "60x60"]))
