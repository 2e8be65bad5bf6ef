"""gemm: C = A x B in u32 with the K reduction fully unrolled (one output per cycle).

A is K x M (numpy shape (M, K)), B is N x K (numpy shape (K, N)), C is N x M
(numpy shape (M, N)), so C == A_np @ B_np. K is fixed (default 8); the
accelerator keeps the whole of B on chip (B is reused by every row of C).
"""

import numpy as np

from loom.frontends.pipeline import Func, ImageParam, RDom, UInt8, Var, evaluate, u32

K = 8
HALO = 0


def algorithm(k=K):
    x, y = Var("x"), Var("y")
    a = ImageParam(UInt8, 2, "A")
    b = ImageParam(UInt8, 2, "B")
    hw_a, hw_b = Func("hw_a"), Func("hw_b")
    hw_a[x, y] = u32(a[x, y])
    hw_b[x, y] = u32(b[x, y])
    r = RDom(0, k, name="r")
    prod = Func("prod")
    prod[x, y] = u32(0)
    prod[x, y] += hw_a[r.x, y] * hw_b[x, r.x]
    output = Func("output")
    output[x, y] = prod[x, y]
    return dict(x=x, y=y, A=a, B=b, hw_a=hw_a, hw_b=hw_b, prod=prod, output=output, r=r)


def cpu_schedule(p):
    p["prod"].compute_root()


def accel_schedule(p, tile=(8, 8)):
    xo, yo, xi, yi = Var("xo"), Var("yo"), Var("xi"), Var("yi")
    out = p["output"]
    out.tile(p["x"], p["y"], xo, yo, xi, yi, *tile).hw_accelerate(xi, xo)
    p["hw_a"].compute_at(out, xo)
    p["hw_b"].compute_at(out, xo)
    p["prod"].update().unroll(p["r"].x)


def build(schedule="accel", tile=(8, 8)):
    p = algorithm()
    if schedule == "accel":
        accel_schedule(p, tile)
    elif schedule == "cpu":
        cpu_schedule(p)
    return p["output"], p


def inputs(size, seed=0, k=K):
    n, m = size
    rng = np.random.default_rng(seed)
    return {"A": rng.integers(0, 256, (m, k), dtype=np.uint8), "B": rng.integers(0, 256, (k, n), dtype=np.uint8)}


if __name__ == "__main__":
    from loom.streaming import build_design, simulate

    out, _ = build("accel", (16, 16))
    d = build_design(out, (16, 16))
    print(d.table())
    ins = inputs((16, 16))
    assert (simulate(out, ins, (16, 16)) == evaluate(out, ins, (16, 16))).all()
    print("simulation matches the CPU reference")
