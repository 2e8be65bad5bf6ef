"""The shape of the lowered CPU code that makes it fast: buffers allocated once at the function's entry
(stack arrays when small), reductions kept as loops beyond a small unroll budget. Values stay exact."""

import numpy as np
import pytest
from tests.pipelines_cpu.cpu_apps import example, numpy_reference, output_size, random_inputs
from xdsl.dialects import func, memref, scf

from loom.frontends import pipeline as pl
from loom.frontends.pipeline import lower_pipeline
from loom.jit.pipeline import compile_cpu


def _lowered(name, schedule, size):
    mod = example(name)
    out, _ = mod.build(schedule)
    inputs = random_inputs(name, mod, size)
    module = lower_pipeline(out, {k: v.shape for k, v in inputs.items()}, output_size(name, size))
    return module, mod, out, inputs


def _allocs(module):
    return [op for op in module.walk() if isinstance(op, (memref.AllocOp, memref.AllocaOp))]


@pytest.mark.parametrize("name", ["gaussian", "harris", "cascade"])
def test_buffers_are_allocated_once_at_entry(name):
    module, *_ = _lowered(name, "cpu", (40, 24))
    allocs = _allocs(module)
    assert allocs  # compute_at stages and constant tables have buffers
    for op in allocs:
        assert isinstance(op.parent_op(), func.FuncOp), f"{op.name} inside {op.parent_op().name}"
    # gaussian computes blur_unnormalized per pixel: a one-element stack array, not a heap buffer per pixel
    if name == "gaussian":
        assert any(isinstance(op, memref.AllocaOp) and op.memref.type.get_shape() == (1, 1) for op in allocs)
    assert not [op for op in module.walk() if isinstance(op, memref.DeallocOp)
                and not isinstance(op.parent_op(), func.FuncOp)]


def test_large_buffers_go_to_the_heap_and_are_freed():
    x, y = pl.Var("x"), pl.Var("y")
    inp = pl.ImageParam(pl.UInt8, 2, "input")
    big = pl.Func("big")
    big[x, y] = pl.u16(inp[x, y]) * 3
    out = pl.Func("out")
    out[x, y] = pl.u8(big[x, y] >> 2)
    big.compute_root()
    size = (150, 100)  # 15,000 u16 values = 30 kB: over the 16 kB stack limit
    module = lower_pipeline(out, {"input": (100, 150)}, size)
    (alloc,) = _allocs(module)
    assert isinstance(alloc, memref.AllocOp)
    frees = [op for op in module.walk() if isinstance(op, memref.DeallocOp)]
    assert len(frees) == 1 and frees[0].memref is alloc.memref
    img = np.random.default_rng(3).integers(0, 256, (100, 150), dtype=np.uint8)
    want = ((img.astype(np.uint16) * 3) >> 2).astype(np.uint8)
    assert np.array_equal(compile_cpu(out, {"input": img.shape}, size)({"input": img}), want)


def _for_extents(module):
    return sorted(op.ub.owner.value.value.data for op in module.walk() if isinstance(op, scf.ForOp))


def test_large_unrolled_reductions_stay_loops():
    # unsharp's accelerator schedule unrolls a 7x7 RDom: on the CPU both stay loops (gcc unrolls them)
    module, mod, out, inputs = _lowered("unsharp", "accel", (11, 7))
    assert _for_extents(module).count(7) >= 2
    # cascade's 3x3 reductions: the innermost r.x (3 copies) fits the budget of 4 body copies, r.y does not
    cmod, *_ = _lowered("cascade", "accel", (11, 7))
    kernel_init = 2  # the 3x3 weight table's initialisation loop nest
    assert _for_extents(cmod).count(3) == kernel_init + 2  # one r.y loop per reduction (conv1, conv2)


@pytest.mark.sanitize
@pytest.mark.parametrize("name", ["unsharp", "conv_layer", "camera_pipeline"])
def test_accelerator_schedules_on_the_cpu_stay_exact(name):
    mod = example(name)
    out, _ = mod.build("accel")
    size = (13, 9)
    inputs = random_inputs(name, mod, size, salt="shape")
    prog = compile_cpu(out, {k: v.shape for k, v in inputs.items()}, output_size(name, size))
    assert np.array_equal(prog(inputs), numpy_reference(name, mod, inputs, size))


def test_affine_indices_address_buffers_from_the_loop_coordinates():
    """inp[y, x] and inp[x / 2, y + 1] index the input from the loops' index values (a floor division by 2 in
    index arithmetic, a shift in C), not through i32 and back, which kept gcc from strength-reducing the
    addressing; a data-dependent index bounded by its type or a mask (lut[inp[x, y] & 15] in a 16-entry table)
    needs no clamp. Values against numpy."""
    x, y = pl.Var("x"), pl.Var("y")
    inp = pl.ImageParam(pl.UInt16, 2, "inp")
    lut = pl.ImageParam(pl.UInt16, 1, "lut")
    f = pl.Func("f")
    f[x, y] = inp[y, x] + inp[x / 2, y + 1] + lut[inp[x, y] & 15]
    module = lower_pipeline(f, {"inp": (64, 64), "lut": (16,)}, (32, 32))
    accesses = [op for op in module.walk() if isinstance(op, (memref.LoadOp, memref.StoreOp))]
    assert len(accesses) == 5
    for op in accesses:
        producers = {getattr(ix.owner, "name", "loop") for ix in op.indices}
        assert not producers & {"arith.minsi", "arith.maxsi"}, (op, producers)
        if op.memref.type.get_shape() != (16,):
            assert "arith.index_cast" not in producers, (op, producers)
    img = np.random.default_rng(9).integers(0, 1000, (64, 64), dtype=np.uint16)
    table = np.random.default_rng(10).integers(0, 1000, 16, dtype=np.uint16)
    yy, xx = np.mgrid[0:32, 0:32]
    want = (img[xx, yy] + img[yy + 1, xx // 2] + table[img[yy, xx] & 15]).astype(np.uint16)
    got = compile_cpu(f, {"inp": img.shape, "lut": table.shape}, (32, 32))({"inp": img, "lut": table})
    np.testing.assert_array_equal(got, want)


def test_a_data_dependent_index_with_a_coordinate_is_still_clamped():
    """g[x, y + (inp[x, y] & 1)]: the data moves a coordinate whose range the index's interval alone does not
    bound, so the index is clamped into g's buffer (memory safety). Values against numpy."""
    x, y = pl.Var("x"), pl.Var("y")
    inp = pl.ImageParam(pl.UInt16, 2, "inp")
    g, f = pl.Func("g"), pl.Func("f")
    g[x, y] = inp[x, y] * 3
    f[x, y] = g[x, y + (inp[x, y] & 1)]
    g.compute_root()
    module = lower_pipeline(f, {"inp": (9, 8)}, (8, 8))
    loads = [op for op in module.walk() if isinstance(op, memref.LoadOp) and op.memref.type.get_shape() == (9, 8)]
    assert any({getattr(ix.owner, "name", "loop") for ix in op.indices} & {"arith.minsi", "arith.maxsi"}
               for op in loads)
    img = np.random.default_rng(11).integers(0, 1000, (9, 8), dtype=np.uint16)
    yy, xx = np.mgrid[0:8, 0:8]
    want = (img[yy + (img[yy, xx] & 1), xx] * 3).astype(np.uint16)
    np.testing.assert_array_equal(compile_cpu(f, {"inp": img.shape}, (8, 8))({"inp": img}), want)


def test_a_clamp_the_value_already_satisfies_is_not_emitted():
    """clamp(i32(u8 value), 0, 255) is the value (a histogram's bin index): no min / max in the lowered code;
    clamp(i32(u8 value), 0, 200) still clamps above. Values against numpy."""
    x, y = pl.Var("x"), pl.Var("y")
    inp = pl.ImageParam(pl.UInt8, 2, "inp")
    for hi, n_minmax in ((255, 0), (200, 1)):
        f = pl.Func("f")
        f[x, y] = pl.clamp(pl.i32(inp[x, y]), 0, hi) * 3
        module = lower_pipeline(f, {"inp": (8, 8)}, (8, 8))
        ops = [op.name for op in module.walk() if op.name in ("arith.minsi", "arith.maxsi")]
        assert len(ops) == n_minmax, (hi, ops)
        img = np.random.default_rng(14).integers(0, 256, (8, 8), dtype=np.uint8)
        np.testing.assert_array_equal(compile_cpu(f, {"inp": img.shape}, (8, 8))({"inp": img}),
                                      np.minimum(img.astype(np.int32), hi) * 3)
