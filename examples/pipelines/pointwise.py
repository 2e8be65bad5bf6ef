"""pointwise: out = u8(min((3 * u16(in)) >> 1, 255)); no halo, every buffer is a wire."""

from loom.frontends.pipeline import Func, ImageParam, UInt8, Var, evaluate, minimum, u8, u16

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
    xo, yo, xi, yi = Var("xo"), Var("yo"), Var("xi"), Var("yi")
    out = a["output"]
    out.tile(a["x"], a["y"], xo, yo, xi, yi, *tile).hw_accelerate(xi, xo)
    a["hw_input"].compute_at(out, xo)
    if rate > 1:
        out.unroll(xi, rate)
        a["hw_input"].unroll(a["x"], rate)


def build(schedule="accel", tile=(64, 64), rate=1):
    a = algorithm()
    if schedule == "accel":
        accel_schedule(a, tile, rate)
    elif schedule == "cpu":
        cpu_schedule(a)
    return a["output"], a


def input_shape(size):
    w, h = size
    return (h, w)


if __name__ == "__main__":
    import numpy as np

    from loom.streaming import build_design, simulate

    out, _ = build("accel", (64, 64))
    print(build_design(out, (64, 64)).table())
    img = np.random.default_rng(0).integers(0, 256, (64, 64), dtype=np.uint8)
    assert (simulate(out, {"input": img}, (64, 64)) == evaluate(out, {"input": img}, (64, 64))).all()
    print("simulation matches the CPU reference")
