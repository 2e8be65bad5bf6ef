"""scf-register-accumulate and arith-contract-fma: IR in / IR out on textual MLIR, structure checked
on the output, semantics checked by running the result with upstream mlir-runner (or loom's C
backend for a convolution lowered from linalg) against numpy."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects import arith, math, memref, scf

from loom import F32, MemRef, kernel, linalg
from loom.errors import LoomError
from loom.passes import Pipeline
from tests.linalg.mlir_exec import HAVE_MLIR
from tests.passes.test_scf_tiling import check_matmul, matmul_loops, parse

needs_mlir = pytest.mark.skipif(not HAVE_MLIR, reason="needs mlir-22-tools")

MICRO_KERNEL = "scf-loop-interchange{{permutation=2,0,1}},scf-tile-and-interchange{{tile-sizes={k},{i},{j}}}"


def micro_kernel(m: int, n: int, k: int, tiles: tuple[int, int, int]):
    module = parse(matmul_loops(m, n, k))
    Pipeline.parse(MICRO_KERNEL.format(k=tiles[0], i=tiles[1], j=tiles[2]) + ",scf-register-accumulate").run(module)
    return module


def test_matmul_tile_accumulates_in_a_local_buffer():
    module = micro_kernel(8, 12, 16, (0, 4, 4))
    (acc,) = [op for op in module.walk() if isinstance(op, memref.AllocaOp)]
    assert acc.memref.type.get_shape() == (4, 4)
    assert not any(isinstance(op, scf.IfOp) for op in module.walk())  # 4 divides 8 and 12: no partial tiles
    c = module.body.block.first_op.body.block.args[2]
    copy_in, reduction, copy_out = [op for op in acc.parent_block().ops if isinstance(op, scf.ForOp)]
    assert not any(c in op.operands for op in reduction.body.walk())  # the k loop touches the buffer, never C
    assert [c in op.operands for op in copy_in.walk()].count(True) == 1  # one load of C's tile
    assert [c in op.operands for op in copy_out.walk()].count(True) == 1  # one store back
    inner = [op for op in module.walk() if isinstance(op, scf.ForOp) and not any(
        isinstance(o, scf.ForOp) for o in op.body.walk()) and any(isinstance(o, arith.MulfOp) for o in op.body.walk())]
    (kernel_loop,) = inner
    assert (kernel_loop.lb.owner.value.value.data, kernel_loop.ub.owner.value.value.data) == (0, 4)


@needs_mlir
@pytest.mark.parametrize("m, n, k, tiles", [(8, 12, 16, (0, 4, 4)), (6, 10, 7, (4, 4, 4)), (5, 9, 3, (2, 3, 8))])
def test_register_accumulated_matmul_runs_like_numpy(m, n, k, tiles):
    module = micro_kernel(m, n, k, tiles)
    partial = m % tiles[1] or n % tiles[2]
    assert any(isinstance(op, scf.IfOp) for op in module.walk()) == bool(partial)  # partial tiles: original nest
    check_matmul(module, m, n, k)


def test_no_reduction_band_or_too_large_a_tile_is_left_alone(caplog):
    module = parse(matmul_loops(8, 8, 8))  # k innermost: no output loop inside the reduction
    before = str(module)
    Pipeline.parse("scf-register-accumulate").run(module)
    assert str(module) == before
    module = parse(matmul_loops(8, 8, 8))
    Pipeline.parse(MICRO_KERNEL.format(k=0, i=0, j=0) + ",scf-register-accumulate{max-elements=32}").run(module)
    assert not any(isinstance(op, memref.AllocaOp) for op in module.walk())
    assert "the output tile has 64 elements (max-elements=32)" in caplog.text


def test_register_accumulate_rejects_bad_sizes():
    with pytest.raises(LoomError, match="max-elements must be a positive integer"):
        Pipeline.parse("scf-register-accumulate{max-elements=0}")


@kernel
def conv(I: MemRef[(1, 2, 16, 16), F32], W: MemRef[(3, 2, 3, 3), F32], O: MemRef[(1, 3, 14, 14), F32]):
    linalg.conv_2d_nchw_fchw(I, W, O)


@pytest.mark.sanitize
def test_convolution_micro_kernel_in_native_c_equals_numpy():
    """nelli's conv shape (small): reduction c, kh, kw outside the f x ow output tile, ow tiled by 8
    (not dividing 14, so the last tile takes the original nest)."""
    from loom.backends.c import compile_module, emit_c
    from loom.passes.recipes import lower_to_c, lower_to_loops
    from loom.tune.cpu_schedule import CpuSchedule

    schedule = CpuSchedule(order=(0, 2, 4, 5, 6, 1, 3), tiles=(0, 0, 0, 0, 0, 0, 8), native=True, accumulate=True)
    module = lower_to_c(schedule.apply(lower_to_loops(conv.module)))
    (acc,) = [op for op in module.walk() if isinstance(op, memref.AllocaOp)]
    assert acc.memref.type.get_shape() == (3, 8)
    assert any(isinstance(op, math.FmaOp) for op in module.walk())
    assert "#pragma omp simd" in emit_c(module, native=True)  # the buffer is local: the ow loop is independent
    rng = np.random.default_rng(1)
    x, w = rng.standard_normal((1, 2, 16, 16)).astype(np.float32), rng.standard_normal((3, 2, 3, 3)).astype(np.float32)
    out = rng.standard_normal((1, 3, 14, 14)).astype(np.float32)
    want = out.astype(np.float64).copy()
    for dy in range(3):
        for dx in range(3):
            want[0] += np.einsum("chw,fc->fhw", x[0, :, dy:dy + 14, dx:dx + 14], w[:, :, dy, dx])
    compile_module(module, native=True).function("conv")(x, w, out)
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)


def test_contract_fma_fuses_a_single_use_product():
    module = parse(matmul_loops(4, 4, 4))
    Pipeline.parse("arith-contract-fma").run(module)
    (fma,) = [op for op in module.walk() if isinstance(op, math.FmaOp)]
    assert not any(isinstance(op, (arith.MulfOp, arith.AddfOp)) for op in module.walk())
    assert fma.operands[2].owner.name == "memref.load"  # the addend is C's old value


def test_contract_fma_keeps_a_product_used_twice():
    text = """
builtin.module {
  func.func @kernel(%a: f32, %b: f32, %c: f32) -> (f32, f32) {
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %p, %c : f32
    func.return %s, %p : f32, f32
  }
}
"""
    module = parse(text)
    Pipeline.parse("arith-contract-fma").run(module)
    assert str(module) == str(parse(text))


@needs_mlir
def test_contracted_matmul_runs_like_numpy():
    module = micro_kernel(6, 10, 7, (4, 4, 4))
    Pipeline.parse("arith-contract-fma").run(module)
    assert [op for op in module.walk() if isinstance(op, math.FmaOp)]
    check_matmul(module, 6, 10, 7)


PACKED = "scf-loop-interchange{{permutation=2,0,1}},scf-tile-and-interchange{{tile-sizes={k},{i},{j} interchange=0,2,1}}"


def packed(m: int, n: int, k: int, tiles: tuple[int, int, int], then: str = ""):
    module = parse(matmul_loops(m, n, k))
    Pipeline.parse(PACKED.format(k=tiles[0], i=tiles[1], j=tiles[2]) + ",scf-pack-reads" + then).run(module)
    return module


def test_pack_copies_the_b_panel_once_per_k_and_j_tile():
    module = packed(8, 12, 16, (8, 4, 4))
    (panel,) = [op for op in module.walk() if isinstance(op, memref.AllocOp)]
    assert panel.memref.type.get_shape() == (8, 4)  # k tile x j tile
    b = module.body.block.first_op.body.block.args[1]
    jt = panel.parent_op()  # placed in the j tile loop, above the i tile loop that reuses it
    it = next(op for op in jt.body.block.ops if isinstance(op, scf.ForOp) and not any(b in o.operands for o in op.walk()))
    assert any(isinstance(o, memref.DeallocOp) and o.operands[0] is panel.memref for o in jt.body.block.ops)
    assert [op for op in it.walk() if isinstance(op, memref.LoadOp) and op.memref is panel.memref]
    a = module.body.block.first_op.body.block.args[0]
    assert [op for op in module.walk() if isinstance(op, memref.LoadOp) and op.memref is a]  # A: no reuse, not packed


def test_pack_places_each_block_above_its_outermost_reuse_within_max_elements():
    module = parse(matmul_loops(8, 8, 8))  # i, j, k: A's row i is reused by every j, all of B by every i
    Pipeline.parse("scf-pack-reads{max-elements=32}").run(module)
    (row,) = [op for op in module.walk() if isinstance(op, memref.AllocOp)]  # B (64 elements) is too large
    assert row.memref.type.get_shape() == (8,)
    assert isinstance(row.parent_op(), scf.ForOp)  # in the i loop, above j
    Pipeline.parse("scf-pack-reads").run(parsed := parse(matmul_loops(8, 8, 8)))
    assert sorted(op.memref.type.get_shape() for op in parsed.walk() if isinstance(op, memref.AllocOp)) == [(8,), (8, 8)]


@needs_mlir
@pytest.mark.parametrize("m, n, k, tiles", [(8, 12, 16, (8, 4, 4)), (7, 10, 9, (4, 3, 4)), (5, 9, 6, (4, 2, 8))])
def test_packed_micro_kernel_runs_like_numpy(m, n, k, tiles):
    module = packed(m, n, k, tiles, ",scf-register-accumulate")
    assert any(isinstance(op, memref.AllocOp) for op in module.walk())
    assert any(isinstance(op, memref.AllocaOp) for op in module.walk())
    check_matmul(module, m, n, k)


@kernel
def zero_then_matmul(A: MemRef[(37, 50), F32], B: MemRef[(50, 45), F32], C: MemRef[(37, 45), F32]):
    linalg.fill(0.0, C)
    linalg.matmul(A, B, C)


@pytest.mark.parametrize("threads", [1, 2])
def test_default_micro_kernel_schedules_the_product_not_the_fill(threads):
    """The model path's untuned schedule: the deepest nest (the product) gets it, the fill nest is left
    alone; with threads the tiles of j are an OpenMP loop. Partial tiles everywhere (37, 45, 50)."""
    from loom.backends.c import compile_module, emit_c
    from loom.passes.recipes import lower_to_c, lower_to_loops
    from loom.tune.cpu import _set_threads
    from loom.tune.cpu_schedule import default_micro_kernel

    loops = lower_to_loops(zero_then_matmul.module)
    schedule = default_micro_kernel(loops, "zero_then_matmul", threads=threads)
    assert schedule.order == (2, 0, 1) and schedule.tiles == (0, 4, 16)  # k i j; K = 50 is not tiled by 256
    module = lower_to_c(schedule.apply(loops))
    assert ("#pragma omp parallel for" in emit_c(module, native=True)) == (threads > 1)
    assert len([op for op in module.walk() if isinstance(op, memref.AllocaOp)]) == 1  # the 4 x 16 accumulators
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((37, 50)).astype(np.float32), rng.standard_normal((50, 45)).astype(np.float32)
    c = np.full((37, 45), 7.0, np.float32)  # the fill must still zero it
    _set_threads(threads)
    compile_module(module, native=True).function("zero_then_matmul")(a, b, c)
    np.testing.assert_allclose(c, a.astype(np.float64) @ b, rtol=1e-4, atol=1e-4)


def test_pack_leaves_a_diagonal_alone():
    text = """
builtin.module {
  func.func @kernel(%A: memref<8x8xf32>, %S: memref<8x8xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    scf.for %i = %c0 to %c8 step %c1 {
      scf.for %j = %c0 to %c8 step %c1 {
        %a = memref.load %A[%j, %j] : memref<8x8xf32>
        memref.store %a, %S[%i, %j] : memref<8x8xf32>
      }
    }
    func.return
  }
}
"""
    module = parse(text)
    Pipeline.parse("scf-pack-reads").run(module)
    assert str(module) == str(parse(text))  # A[j, j] is no box of A: nothing to copy


@kernel
def narrow_matmul(A: MemRef[(8, 300), F32], B: MemRef[(300, 24), F32], C: MemRef[(8, 24), F32]):
    linalg.matmul(A, B, C)


def test_threaded_micro_kernel_with_a_narrow_output_still_has_a_parallel_loop():
    """N = 24 is not tiled (whole rows in registers), so K = 300 is not tiled either with threads:
    a k tile loop outermost could not be given to threads."""
    from loom.backends.c import emit_c
    from loom.passes.recipes import lower_to_c, lower_to_loops
    from loom.tune.cpu_schedule import default_micro_kernel

    loops = lower_to_loops(narrow_matmul.module)
    assert default_micro_kernel(loops, "narrow_matmul").tiles == (256, 4, 0)
    schedule = default_micro_kernel(loops, "narrow_matmul", threads=2)
    assert schedule.tiles == (0, 4, 0)
    assert "#pragma omp parallel for" in emit_c(lower_to_c(schedule.apply(loops)), native=True)


def test_pack_leaves_a_memref_written_through_a_view_alone():
    text = """
builtin.module {
  func.func @kernel(%A: memref<8x8xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %v = memref.subview %A[0, 0] [4, 8] [1, 1] : memref<8x8xf32> to memref<4x8xf32, strided<[8, 1]>>
    scf.for %i = %c0 to %c4 step %c1 {
      scf.for %j = %c0 to %c4 step %c1 {
        %a = memref.load %A[%j, %j] : memref<8x8xf32>
        %b = memref.load %A[%c1, %j] : memref<8x8xf32>
        %s = arith.addf %a, %b : f32
        memref.store %s, %v[%i, %j] : memref<4x8xf32, strided<[8, 1]>>
      }
    }
    func.return
  }
}
"""
    module = parse(text)
    Pipeline.parse("scf-pack-reads").run(module)
    assert str(module) == str(parse(text))  # A row 1 would be packed above i, but the loop writes A through %v


def test_pack_leaves_a_memref_written_by_another_op_alone():
    text = """
builtin.module {
  func.func @kernel(%buf: memref<4xf32>, %out: memref<8x4xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c8 = arith.constant 8 : index
    scf.for %t = %c0 to %c8 step %c1 {
      %v = arith.index_cast %t : index to i32
      %f = arith.sitofp %v : i32 to f32
      linalg.fill ins(%f : f32) outs(%buf : memref<4xf32>)
      scf.for %i = %c0 to %c4 step %c1 {
        %x = memref.load %buf[%i] : memref<4xf32>
        memref.store %x, %out[%t, %i] : memref<8x4xf32>
      }
    }
    func.return
  }
}
"""
    module = parse(text)
    Pipeline.parse("scf-pack-reads").run(module)
    # buf was packed once above t: every row of out got the first fill's value
    assert str(module) == str(parse(text))
