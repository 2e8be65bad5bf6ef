"""scf-tile-and-interchange and scf-loop-interchange: IR in / IR out, structure
checked on the output, semantics checked by executing before and after with
upstream mlir-runner against numpy."""

from __future__ import annotations

import logging

import numpy as np
import pytest
from tests.linalg.mlir_exec import HAVE_MLIR, mlir_verify, run_function
from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser

from loom.errors import LoomError
from loom.passes import Pipeline
from loom.passes.pipeline import default_context

needs_mlir = pytest.mark.skipif(not HAVE_MLIR, reason="needs mlir-22-tools")


def matmul_loops(m: int, n: int, k: int, tag: str = "") -> str:
    """C[i,j] += A[i,k] * B[k,j] as a perfect i, j, k nest, written by hand."""
    return f"""
builtin.module {{
  func.func @kernel(%A: memref<{m}x{k}xf32>, %B: memref<{k}x{n}xf32>, %C: memref<{m}x{n}xf32>) {{
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %cm = arith.constant {m} : index
    %cn = arith.constant {n} : index
    %ck = arith.constant {k} : index
    scf.for %i = %c0 to %cm step %c1 {{
      scf.for %j = %c0 to %cn step %c1 {{
        scf.for %p = %c0 to %ck step %c1 {{
          %a = memref.load %A[%i, %p] : memref<{m}x{k}xf32>
          %b = memref.load %B[%p, %j] : memref<{k}x{n}xf32>
          %c = memref.load %C[%i, %j] : memref<{m}x{n}xf32>
          %x = arith.mulf %a, %b : f32
          %y = arith.addf %c, %x : f32
          memref.store %y, %C[%i, %j] : memref<{m}x{n}xf32>
        }}
      }} {tag}
    }}
    func.return
  }}
}}
"""


def parse(text: str) -> ModuleOp:
    module = Parser(default_context(), text).parse_module()
    module.verify()
    return module


def nest(module: ModuleOp) -> list[scf.ForOp]:
    """The chain of scf.for loops from the outermost one down (first loop at each level)."""
    loops = []
    op = next(o for o in module.walk() if isinstance(o, scf.ForOp))
    while op is not None:
        loops.append(op)
        op = next((o for o in op.body.block.ops if isinstance(o, scf.ForOp)), None)
    return loops


def const(value) -> int | None:
    owner = value.owner
    return owner.value.value.data if isinstance(owner, arith.ConstantOp) else None


def check_matmul(module: ModuleOp, m: int, n: int, k: int, seed: int = 0) -> None:
    mlir_verify(str(module))
    rng = np.random.default_rng(seed)
    a, b, c = (rng.standard_normal(s).astype(np.float32) for s in ((m, k), (k, n), (m, n)))
    _, _, got = run_function(str(module), "kernel", [a, b, c])
    np.testing.assert_allclose(got, c + a.astype(np.float64) @ b, rtol=2e-5, atol=2e-5)


def test_tile_divisible_bounds_has_no_min():
    module = parse(matmul_loops(8, 6, 4))
    Pipeline.parse("scf-tile-and-interchange{tile-sizes=4,3,2}").run(module)
    loops = nest(module)
    assert len(loops) == 6
    assert [const(loop.step) for loop in loops[:3]] == [4, 3, 2]  # tile loops
    assert [const(loop.step) for loop in loops[3:]] == [1, 1, 1]  # point loops
    assert not any(isinstance(o, arith.MinSIOp) for o in module.walk())
    # point loop i runs from the tile iv to tile iv + 4
    assert loops[3].lb is loops[0].body.block.args[0]


@needs_mlir
def test_tile_divisible_semantics():
    module = parse(matmul_loops(8, 6, 4))
    Pipeline.parse("scf-tile-and-interchange{tile-sizes=4,3,2}").run(module)
    check_matmul(module, 8, 6, 4)


@needs_mlir
def test_tile_non_divisible_and_interchange():
    m, n, k = 7, 5, 6
    module = parse(matmul_loops(m, n, k))
    Pipeline().tile_and_interchange(tile_sizes=[4, 3, 4], interchange=[0, 2, 1]).run(module)
    loops = nest(module)
    assert len(loops) == 6
    # tile loops ordered i, k, j by interchange; bounds travel with their loop
    assert [const(loop.ub) for loop in loops[:3]] == [m, k, n]
    assert [const(loop.step) for loop in loops[:3]] == [4, 4, 3]
    assert sum(isinstance(o, arith.MinSIOp) for o in module.walk()) == 3
    check_matmul(module, m, n, k)


@needs_mlir
def test_tile_size_zero_keeps_loop():
    m, n, k = 5, 4, 3
    module = parse(matmul_loops(m, n, k))
    Pipeline.parse("scf-tile-and-interchange{tile-sizes=2,0,2 interchange=2,1,0}").run(module)
    loops = nest(module)
    assert len(loops) == 5  # two tile loops (k, i), three point loops
    assert [const(loop.ub) for loop in loops[:2]] == [k, m]
    assert const(loops[3].ub) == n and const(loops[3].step) == 1  # j untiled
    check_matmul(module, m, n, k)


@needs_mlir
def test_tile_loops_lowered_from_linalg():
    from xdsl.builder import ImplicitBuilder
    from xdsl.dialects import func
    from xdsl.dialects.builtin import MemRefType, f32

    from loom.frontends.kernel import linalg as L
    from loom.passes import lower_to_c

    m, n, k = 6, 5, 7
    fn = func.FuncOp("kernel", ([MemRefType(f32, s) for s in ([m, k], [k, n], [m, n])], []))
    with ImplicitBuilder(fn.body) as (A, B, C):
        L.matmul(A, B, C)
        func.ReturnOp()
    lowered = lower_to_c(ModuleOp([fn]))
    Pipeline.parse("scf-tile-and-interchange{tile-sizes=4,4,4 interchange=1,2,0}").run(lowered)
    assert len(nest(lowered)) == 6
    check_matmul(lowered, m, n, k)


def test_tagged_loop_only(caplog):
    # the tag on the j loop: only the (j, k) band is tiled, i stays as is
    module = parse(matmul_loops(4, 6, 4, tag="{loom.tile}"))
    Pipeline.parse("scf-tile-and-interchange{tile-sizes=3,2}").run(module)
    loops = nest(module)
    assert len(loops) == 5
    assert const(loops[0].ub) == 4 and const(loops[0].step) == 1  # i untouched
    assert [const(loop.step) for loop in loops[1:3]] == [3, 2]
    assert not any("loom.tile" in o.attributes for o in module.walk())


def test_imperfect_nest_left_alone_with_remark(caplog):
    text = matmul_loops(4, 4, 4).replace(
        "      scf.for %j", "      %extra = arith.constant 7 : index\n      scf.for %j")
    module = parse(text)
    before = str(module)
    with caplog.at_level(logging.WARNING, logger="loom.passes"):
        Pipeline.parse("scf-tile-and-interchange{tile-sizes=2,2,2}").run(module)
    assert str(module) == before
    assert "imperfect nest" in caplog.text and "func @kernel" in caplog.text


def test_iter_args_left_alone(caplog):
    text = """
builtin.module {
  func.func @sum(%A: memref<8xf32>, %out: memref<f32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %z = arith.constant 0.0 : f32
    %s = scf.for %i = %c0 to %c8 step %c1 iter_args(%acc = %z) -> (f32) {
      %a = memref.load %A[%i] : memref<8xf32>
      %n = arith.addf %acc, %a : f32
      scf.yield %n : f32
    }
    memref.store %s, %out[] : memref<f32>
    func.return
  }
}
"""
    module = parse(text)
    before = str(module)
    with caplog.at_level(logging.WARNING, logger="loom.passes"):
        Pipeline.parse("scf-tile-and-interchange{tile-sizes=4}").run(module)
    assert str(module) == before
    assert "iter_args" in caplog.text


def test_shallow_nest_left_alone(caplog):
    module = parse(matmul_loops(4, 4, 4))
    before = str(module)
    with caplog.at_level(logging.WARNING, logger="loom.passes"):
        Pipeline.parse("scf-tile-and-interchange{tile-sizes=2,2,2,2}").run(module)
    assert str(module) == before and "imperfect nest" in caplog.text


def test_bad_options():
    with pytest.raises(LoomError, match="not a permutation"):
        Pipeline.parse("scf-tile-and-interchange{tile-sizes=2,2 interchange=0,0}")
    with pytest.raises(LoomError, match="tile-sizes is required"):
        Pipeline.parse("scf-tile-and-interchange")
    with pytest.raises(LoomError, match=">= 0"):
        Pipeline().tile_and_interchange(tile_sizes=[-1])
    with pytest.raises(LoomError, match="scf-loop-interchange.*not a permutation"):
        Pipeline.parse("scf-loop-interchange{permutation=0,2}")


@needs_mlir
@pytest.mark.parametrize("perm", [(1, 0, 2), (2, 0, 1)])
def test_loop_interchange(perm):
    m, n, k = 3, 4, 5
    module = parse(matmul_loops(m, n, k))
    Pipeline.parse(f"scf-loop-interchange{{permutation={','.join(map(str, perm))}}}").run(module)
    loops = nest(module)
    assert [const(loop.ub) for loop in loops] == [(m, n, k)[p] for p in perm]
    check_matmul(module, m, n, k)


STRIDED = """
builtin.module {
  func.func @kernel(%C: memref<11x9xf32>) {
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c3 = arith.constant 3 : index
    %c11 = arith.constant 11 : index
    %c9 = arith.constant 9 : index
    %ten = arith.constant 10.0 : f32
    scf.for %i = %c1 to %c11 step %c2 {
      scf.for %j = %c0_or_3 to %c9 step %c3 {
        %ii = arith.index_cast %i : index to i32
        %jj = arith.index_cast %j : index to i32
        %fi = arith.sitofp %ii : i32 to f32
        %fj = arith.sitofp %jj : i32 to f32
        %v = arith.mulf %fi, %ten : f32
        %w = arith.addf %v, %fj : f32
        %old = memref.load %C[%i, %j] : memref<11x9xf32>
        %new = arith.addf %old, %w : f32
        memref.store %new, %C[%i, %j] : memref<11x9xf32>
      }
    }
    func.return
  }
}
""".replace("%c0_or_3", "%c1")


@needs_mlir
@pytest.mark.parametrize("spec", ["scf-tile-and-interchange{tile-sizes=2,2 interchange=1,0}",
                                  "scf-tile-and-interchange{tile-sizes=3,4}",
                                  "scf-loop-interchange{permutation=1,0}"])
def test_nonzero_lower_bound_and_step(spec):
    # every visited (i, j) gets 10*i + j added once: compare upstream runs before and after
    before = parse(STRIDED)
    after = Pipeline.parse(spec).run(parse(STRIDED))
    assert str(after) != str(before)
    mlir_verify(str(after))
    start = np.zeros((11, 9), dtype=np.float32)
    (want,) = run_function(str(before), "kernel", [start])
    (got,) = run_function(str(after), "kernel", [start])
    expected = np.zeros((11, 9))
    for i in range(1, 11, 2):
        for j in range(1, 9, 3):
            expected[i, j] = 10 * i + j
    np.testing.assert_array_equal(want, expected)
    np.testing.assert_array_equal(got, expected)


def test_symbolic_bounds_and_step():
    text = """
builtin.module {
  func.func @kernel(%A: memref<?xf32>, %n: index, %s: index) {
    %c0 = arith.constant 0 : index
    %one = arith.constant 1.0 : f32
    scf.for %i = %c0 to %n step %s {
      memref.store %one, %A[%i] : memref<?xf32>
    }
    func.return
  }
}
"""
    module = Pipeline.parse("scf-tile-and-interchange{tile-sizes=8}").run(parse(text))
    loops = nest(module)
    assert len(loops) == 2
    step = loops[0].step.owner
    assert isinstance(step, arith.MuliOp) and loops[0].ub is loops[1].ub.owner.rhs
    assert isinstance(loops[1].ub.owner, arith.MinSIOp)
    if HAVE_MLIR:
        mlir_verify(str(module))
