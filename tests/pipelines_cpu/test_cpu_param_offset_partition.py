"""A boundary condition read moved by an unranged Param (``repeat_edge(inp)[x + off, y]``) is partitioned on the
Param's run-time value, as Halide partitions it: the middle part of the row loop, where every read lies inside,
runs without the clamps (they ran at every pixel), its reads indexed as the loop index plus the offset. Values against numpy for offsets inside, across and past
the image."""

import numpy as np
from xdsl.dialects import arith, memref, scf

import loom.frontends.pipeline as lp
from loom.jit.pipeline import compile_cpu


def test_a_param_offset_read_is_partitioned_on_the_params_value():
    x, y = lp.Var("x"), lp.Var("y")
    inp = lp.ImageParam(lp.UInt8, 2, "inp")
    off = lp.Param(lp.Int32, "off", 0)
    small = lp.Param(lp.UInt8, "small", 0)
    out = lp.Func("out")
    cl = lp.BoundaryConditions.repeat_edge(inp)
    out[x, y] = lp.u16(cl[x + off, y]) + cl[x - lp.i32(small) + 1, y]
    a = np.random.default_rng(9).integers(0, 256, (5, 40)).astype(np.uint8)
    program = compile_cpu(out, {"inp": a.shape}, (40, 5))
    parts = [op for op in program.module.walk()
             if isinstance(op, scf.ForOp) and not isinstance(op.ub.owner, arith.ConstantOp)]
    clamps = [sum(o.name in ("arith.minsi", "arith.maxsi") for o in p.body.walk()) for p in parts]
    assert 0 in clamps and max(clamps) > 0
    # there the reads index the input as loop index + offset, not through i32 (whose wrapping kept gcc from
    # vectorizing; the inlined boundary condition's any-i32 region had turned that off for the whole pipeline)
    middle = parts[clamps.index(0)]
    loads = [op for op in middle.body.walk() if isinstance(op, memref.LoadOp)]
    assert loads and all(not isinstance(op.indices[-1].owner, arith.IndexCastOp) for op in loads)
    cols = np.arange(40)
    for o, s in [(0, 0), (7, 3), (-13, 200), (1000, 1), (-50, 0), (39, 255)]:
        got = program({"inp": a, "off": o, "small": s})
        want = a[:, np.clip(cols + o, 0, 39)].astype(np.uint16) + a[:, np.clip(cols - s + 1, 0, 39)]
        np.testing.assert_array_equal(got, want, err_msg=f"off={o} small={s}")
