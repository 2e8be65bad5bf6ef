"""gemm: C = A x B in u32 with the K reduction fully unrolled (one output per cycle).

``build(k_unroll=n)`` instead iterates K in time on the accelerator: ``prod``
gets its own buffer, n products per cycle, K/n cycles per output, with the
partial sums in an accumulation register (``k_unroll=1``: one MAC per cycle).

A is K x M (numpy shape (M, K)), B is N x K (numpy shape (K, N)), C is N x M
(numpy shape (M, N)), so C == A_np @ B_np. K is fixed (default 8); the
accelerator keeps the whole of B on chip (B is reused by every row of C).
"""

from loom.frontends.pipeline import Func, ImageParam, RDom, UInt8, Var, u32
from loom.frontends.pipeline.recipes import schedule_app, stream_through_accelerator
from loom.examples.pipelines._inputs import u8_image

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


def accel_schedule(p, tile=(8, 8), k_unroll=None):
    if k_unroll is None:  # the whole reduction in one cycle
        stream_through_accelerator(p["output"], tile, buffered=[p["hw_a"], p["hw_b"]], reductions=[p["prod"]])
        return
    stream_through_accelerator(p["output"], tile, buffered=[p["hw_a"], p["hw_b"], p["prod"]])
    if k_unroll > 1:
        p["prod"].update(0).unroll(p["r"].x, k_unroll)


def build(schedule="accel", tile=(8, 8), k=K, k_unroll=None):
    args = dict(tile=tile) if k_unroll is None else dict(tile=tile, k_unroll=k_unroll)
    return schedule_app(algorithm(k), schedule, cpu_schedule, accel_schedule, **args)


def make_inputs(size, rng, k=K):
    n, m = size
    return {"A": u8_image(rng, (m, k)), "B": u8_image(rng, (k, n))}


def output_shape(size):
    return tuple(size)


if __name__ == "__main__":  # the design, its simulation and the CPU run, checked: ``loom pipeline gemm``
    from loom.cli import main

    raise SystemExit(main(["pipeline", "gemm", "--size", "16x16"]))
