"""cascade (thesis Code 3.1): two 3x3 [1 2 1; 2 4 2; 1 2 1]/16 convolutions in u16.

Input (w+4) x (h+4) u8 -> output w x h u8.
``build("accel", tile)`` gives the accelerator schedule at 1 pixel/cycle with
buffers hw_input and conv1 (``rate=n``: n pixels/cycle); ``build("cpu")`` a tiled CPU schedule.
"""

from loom.frontends.pipeline import Func, ImageParam, RDom, UInt8, Var, evaluate, u8, u16

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
    xo, yo, xi, yi = Var("xo"), Var("yo"), Var("xi"), Var("yi")
    a["output"].tile(a["x"], a["y"], xo, yo, xi, yi, *tile)
    a["conv1"].compute_at(a["output"], xo)


def accel_schedule(a, tile=(60, 60), rate=1):
    xo, yo, xi, yi = Var("xo"), Var("yo"), Var("xi"), Var("yi")
    out = a["output"]
    out.tile(a["x"], a["y"], xo, yo, xi, yi, *tile).hw_accelerate(xi, xo)
    a["hw_input"].compute_at(out, xo)
    a["conv1"].compute_at(out, xo)
    a["conv1"].update().unroll(a["r"].x).unroll(a["r"].y)
    a["conv2"].update().unroll(a["r2"].x).unroll(a["r2"].y)
    if rate > 1:  # n pixels per cycle: every stage's innermost dimension unrolled by the same factor
        out.unroll(xi, rate)
        a["hw_input"].unroll(a["x"], rate)
        a["conv1"].unroll(a["x"], rate)


def build(schedule="accel", tile=(60, 60), rate=1):
    a = algorithm()
    if schedule == "accel":
        accel_schedule(a, tile, rate)
    elif schedule == "cpu":
        cpu_schedule(a)
    return a["output"], a


def input_shape(size):
    w, h = size
    return (h + HALO, w + HALO)


if __name__ == "__main__":
    import numpy as np

    from loom.streaming import build_design, simulate

    out, _ = build("accel", (60, 60))
    design = build_design(out, (60, 60))
    print(design.table())
    img = np.random.default_rng(0).integers(0, 256, input_shape((60, 60)), dtype=np.uint8)
    assert (simulate(out, {"input": img}, (60, 60)) == evaluate(out, {"input": img}, (60, 60))).all()
    print("simulation matches the CPU reference")
