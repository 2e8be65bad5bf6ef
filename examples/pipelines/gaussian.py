"""gaussian: 3x3 blur with sigma-1.5 weights normalised to 256, in u16.

Weights [[24,30,24],[30,37,30],[24,30,24]] (sum 253), sum then / 256.
Input (w+2) x (h+2) u8 -> output w x h u8.
"""

from loom.frontends.pipeline import Func, ImageParam, RDom, UInt8, Var, evaluate, u8, u16

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
    xo, yo, xi, yi = Var("xo"), Var("yo"), Var("xi"), Var("yi")
    a["output"].tile(a["x"], a["y"], xo, yo, xi, yi, *tile)
    a["hw_input"].compute_at(a["output"], xo)


def accel_schedule(a, tile=(62, 62), rate=1):
    xo, yo, xi, yi = Var("xo"), Var("yo"), Var("xi"), Var("yi")
    out = a["output"]
    out.tile(a["x"], a["y"], xo, yo, xi, yi, *tile).hw_accelerate(xi, xo)
    a["hw_input"].compute_at(out, xo)
    a["blur_unnormalized"].update().unroll(a["win"].x).unroll(a["win"].y)
    if rate > 1:
        out.unroll(xi, rate)
        a["hw_input"].unroll(a["x"], rate)


def build(schedule="accel", tile=(62, 62), rate=1):
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

    out, _ = build("accel", (62, 62))
    print(build_design(out, (62, 62)).table())
    img = np.random.default_rng(0).integers(0, 256, input_shape((62, 62)), dtype=np.uint8)
    assert (simulate(out, {"input": img}, (62, 62)) == evaluate(out, {"input": img}, (62, 62))).all()
    print("simulation matches the CPU reference")
