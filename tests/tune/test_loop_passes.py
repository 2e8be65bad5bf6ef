"""scf-unroll and scf-parallelize: IR in / IR out on textual MLIR, structure checked on the output,
semantics checked by running before/after with upstream mlir-runner (scf.parallel included)."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects import arith, scf
from xdsl.utils.exceptions import VerifyException  # noqa: F401 - documents what verify raises

from loom.errors import LoomError
from loom.passes import Pipeline
from tests.linalg.mlir_exec import HAVE_MLIR, mlir_verify, run_function
from tests.passes.test_scf_tiling import check_matmul, matmul_loops, parse

needs_mlir = pytest.mark.skipif(not HAVE_MLIR, reason="needs mlir-22-tools")

SUM_ROWS = """
builtin.module {
  func.func @kernel(%A: memref<MMxNNxf32>, %S: memref<MMxf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %cm = arith.constant MM : index
    %cn = arith.constant NN : index
    scf.for %i = %c0 to %cm step %c1 {
      %init = memref.load %S[%i] : memref<MMxf32>
      %acc = scf.for %j = %c0 to %cn step %c1 iter_args(%x = %init) -> (f32) {
        %a = memref.load %A[%i, %j] : memref<MMxNNxf32>
        %y = arith.addf %x, %a : f32
        scf.yield %y : f32
      }
      memref.store %acc, %S[%i] : memref<MMxf32>
    }
    func.return
  }
}
"""


def sum_rows(m: int, n: int) -> str:
    return SUM_ROWS.replace("MM", str(m)).replace("NN", str(n))


def innermost(module) -> list[scf.ForOp]:
    return [op for op in module.walk() if isinstance(op, scf.ForOp)
            and not any(isinstance(o, scf.ForOp) for o in op.body.walk())]


def test_unroll_divisible_trip_count_has_no_remainder():
    module = parse(matmul_loops(4, 4, 8))
    Pipeline.parse("scf-unroll{factor=4}").run(module)
    loops = innermost(module)
    assert len(loops) == 1  # no remainder loop: 8 iterations, factor 4
    body_loads = [op for op in loops[0].body.block.ops if op.name == "memref.load"]
    assert len(body_loads) == 12  # 4 copies of 3 loads
    assert loops[0].step.owner.value.value.data == 4


@needs_mlir
def test_unroll_with_remainder_and_iter_args_runs_like_numpy():
    m, n = 5, 11
    module = parse(sum_rows(m, n))
    Pipeline.parse("scf-unroll{factor=3}").run(module)
    loops = innermost(module)
    assert len(loops) == 2  # main loop (3 per step) + remainder
    assert all(loop.iter_args for loop in loops)
    mlir_verify(str(module))
    rng = np.random.default_rng(0)
    a, s = rng.standard_normal((m, n)).astype(np.float32), rng.standard_normal(m).astype(np.float32)
    _, got = run_function(str(module), "kernel", [a, s])
    np.testing.assert_allclose(got, s + a.astype(np.float64).sum(axis=1), rtol=1e-5, atol=1e-5)


@needs_mlir
def test_unroll_matmul_non_divisible():
    module = parse(matmul_loops(3, 4, 7))
    Pipeline.parse("scf-unroll{factor=2}").run(module)
    assert len(innermost(module)) == 2
    check_matmul(module, 3, 4, 7)


def test_unroll_rejects_bad_factor():
    with pytest.raises(LoomError, match="factor must be a positive integer"):
        Pipeline.parse("scf-unroll{factor=0}")


@needs_mlir
def test_parallelize_outer_loop_of_a_matmul():
    module = parse(matmul_loops(6, 5, 4))
    Pipeline.parse("scf-parallelize").run(module)
    parallel = [op for op in module.walk() if isinstance(op, scf.ParallelOp)]
    assert len(parallel) == 1 and not any(isinstance(op.parent_op(), scf.ForOp) for op in parallel)
    check_matmul(module, 6, 5, 4)


@needs_mlir
def test_parallelize_tile_loop_owns_its_point_loop():
    module = parse(matmul_loops(8, 6, 5))
    Pipeline.parse("scf-tile-and-interchange{tile-sizes=3,2,0},scf-parallelize").run(module)
    (parallel,) = [op for op in module.walk() if isinstance(op, scf.ParallelOp)]
    assert parallel.step[0].owner.value.value.data == 3  # the tile loop of i
    check_matmul(module, 8, 6, 5)


def test_parallelize_leaves_a_reduction_loop_alone(caplog):
    module = parse(matmul_loops(4, 4, 4))
    Pipeline.parse("scf-loop-interchange{permutation=2,0,1},scf-parallelize").run(module)  # k outermost
    assert not any(isinstance(op, scf.ParallelOp) for op in module.walk())
    assert "no index of a stored memref is owned by the loop" in caplog.text


def test_parallelize_leaves_iter_args_and_mixed_indices_alone(caplog):
    text = """
builtin.module {
  func.func @shift(%A: memref<8xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c7 = arith.constant 7 : index
    scf.for %i = %c0 to %c7 step %c1 {
      %n = arith.addi %i, %c1 : index
      %x = memref.load %A[%n] : memref<8xf32>
      memref.store %x, %A[%i] : memref<8xf32>
    }
    func.return
  }
}
"""
    module = parse(text)
    Pipeline.parse("scf-parallelize").run(module)
    assert not any(isinstance(op, scf.ParallelOp) for op in module.walk())  # A[i] = A[i+1] is a chain
    assert "accessed with different indices" in caplog.text
    module = parse(sum_rows(3, 3))
    Pipeline.parse("scf-parallelize").run(module)
    assert any(isinstance(op, scf.ParallelOp) for op in module.walk())  # outer i loop: S[i] owned
    assert not any(isinstance(o, arith.MinSIOp) for o in module.walk())


@pytest.mark.parametrize("width, pragma", [(0, None), (8, "#pragma omp simd simdlen(8)")])
def test_vector_hint_shapes_the_simd_pragma_of_native_c(width, pragma):
    from loom.backends.c import emit_c

    plain = parse(matmul_loops(4, 4, 4))
    Pipeline.parse("scf-loop-interchange{permutation=0,2,1}").run(plain)  # j innermost: independent
    assert "#pragma omp simd\n" in emit_c(plain, native=True)  # loom's own pragma without a hint
    module = parse(matmul_loops(4, 4, 4))
    Pipeline.parse(f"scf-loop-interchange{{permutation=0,2,1}},scf-vector-hint{{width={width}}}").run(module)
    (inner,) = innermost(module)
    assert inner.attributes["loom.simd"].value.data == width
    text = emit_c(module, native=True)
    if pragma is None:
        assert "omp simd" not in text
    else:
        assert pragma in text
    assert "omp simd" not in emit_c(module)  # the hint never matters outside native mode


def test_vector_hint_rejects_bad_widths():
    with pytest.raises(LoomError, match="width must be 0 or a power of two"):
        Pipeline.parse("scf-vector-hint{width=6}")
