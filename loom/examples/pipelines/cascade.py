"""cascade (thesis Code 3.1): two 3x3 [1 2 1; 2 4 2; 1 2 1]/16 convolutions in u16.

Input (w+4) x (h+4) u8 -> output w x h u8.
``build("accel", tile)`` gives the accelerator schedule at 1 pixel/cycle with
buffers hw_input and conv1 (``rate=n``: n pixels/cycle); ``build("cpu")`` a tiled CPU schedule.
"""

from loom.errors import LoomError
from loom.frontends.pipeline import Func, ImageParam, MemoryType, RDom, UInt8, Var, u8, u16
from loom.frontends.pipeline.recipes import compute_in_tiles, schedule_app, stream_through_accelerator
from loom.examples.pipelines._inputs import image_inputs

HALO = 4
WEIGHTS = [[1, 2, 1], [2, 4, 2], [1, 2, 1]]


def algorithm():
    x, y = Var("x"), Var("y")
    inp = ImageParam(UInt8, 2, "input")
    kernel = Func("kernel")
    kernel[x, y] = 0
    for i in range(3):
        for j in range(3):
            kernel[i, j] = WEIGHTS[j][i]
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


def build(schedule="accel", tile=(60, 60), rate=1, glb_tile=None):
    """``glb_tile=(w, h)``: the two-level hierarchy of thesis Code 3.6 (GLB tiles of fabric tiles)."""
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
