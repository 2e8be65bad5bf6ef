"""Parallel and vector CPU code: scf.parallel as OpenMP loops (with reductions), native mode's
simd pragmas and restrict pointers, and the call-time aliasing check that keeps restrict true."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from tests.backends.cbackend_helpers import parse

from loom.backends.c import compile_module, emit_c
from loom.backends.c.compiler import compile_flags
from loom.backends.c.openmp import uses_openmp
from loom.errors import LoomError
from loom.examples.kernels import matmul_ikj, stencil3x3_parallel
from loom.passes.recipes import lower_to_c

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _body(source: str, name: str) -> str:
    start = source.index(f"loom_{name}(", source.index(f"loom_{name}(") + 1)
    return source[start : source.index("\n}\n", start)]


def test_parallel_kernel_emits_a_collapsed_omp_loop_and_builds_with_openmp():
    source = emit_c(lower_to_c(stencil3x3_parallel.module))
    # two dims: the innermost stays out of the team loop so that it can be vectorized
    assert source.count("#pragma omp parallel for\n") == 1 and uses_openmp(source)
    serial = emit_c(lower_to_c(matmul_ikj.module))
    assert "#pragma" not in serial and "restrict" not in serial and not uses_openmp(serial)
    assert "-fopenmp" in compile_flags(False, openmp=True) and "-fopenmp" not in compile_flags(False)


CHILD = """
import ctypes, json, sys
import numpy as np
from loom.examples.kernels import stencil3x3_parallel, stencil3x3_parallel_reference
from loom.backends.c import compile_module
from loom.passes.recipes import lower_to_c
compiled = compile_module(lower_to_c(stencil3x3_parallel.module))
a = np.random.default_rng(7).standard_normal((67, 45), dtype=np.float32)
b = np.zeros_like(a)
compiled.function("stencil3x3_parallel")(a, b)
ref = stencil3x3_parallel_reference(a, np.zeros_like(a))
threads = compiled.library.omp_get_max_threads()  # libgomp, loaded as the module's dependency
print(json.dumps({{"threads": threads, "max_err": float(np.abs(b - ref).max())}}))
"""


@pytest.mark.sanitize
@pytest.mark.parametrize("threads", [1, 2])
def test_parallel_stencil_equals_numpy_on_1_and_2_threads(threads):
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), PYTHONPATH=ROOT)
    script = CHILD.format()
    child = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env)
    assert child.returncode == 0, child.stderr[-3000:]
    result = json.loads(child.stdout.strip().splitlines()[-1])
    assert result["threads"] == threads
    assert result["max_err"] <= 1e-5


REDUCE_1 = """
func.func @{name}(%X: memref<?xf32>) -> f32 {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant {init} : f32
  %n = memref.dim %X, %c0 : memref<?xf32>
  %s = "scf.parallel"(%c0, %n, %c1, %z) <{{operandSegmentSizes = array<i32: 1, 1, 1, 1>}}> ({{
  ^bb0(%i: index):
    %x = memref.load %X[%i] : memref<?xf32>
    "scf.reduce"(%x) ({{
    ^bb1(%l: f32, %r: f32):
{combine}
    }}) : (f32) -> ()
  }}) : (index, index, index, f32) -> f32
  return %s : f32
}}
"""
REDUCTIONS = "".join([
    REDUCE_1.format(name="sum_f32", init="0.0", combine="""      %q = arith.addf %l, %r : f32
      "scf.reduce.return"(%q) : (f32) -> ()"""),
    REDUCE_1.format(name="fmax", init="-1.0e30", combine="""      %q = arith.maximumf %l, %r : f32
      "scf.reduce.return"(%q) : (f32) -> ()"""),
    REDUCE_1.format(name="sum_of_squares", init="0.0", combine="""      %sq = arith.mulf %r, %r : f32
      %q = arith.addf %l, %sq : f32
      "scf.reduce.return"(%q) : (f32) -> ()"""),
    """
func.func @stats_i64(%X: memref<?x?xi64>) -> (i64, i64, i64) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0 : i64
  %one = arith.constant 1 : i64
  %neg = arith.constant -1 : i64
  %lo = arith.constant -9223372036854775808 : i64
  %n = memref.dim %X, %c0 : memref<?x?xi64>
  %m = memref.dim %X, %c1 : memref<?x?xi64>
  %s:3 = "scf.parallel"(%c0, %c0, %n, %m, %c1, %c1, %z, %one, %lo) <{operandSegmentSizes = array<i32: 2, 2, 2, 3>}> ({
  ^bb0(%i: index, %j: index):
    %x = memref.load %X[%i, %j] : memref<?x?xi64>
    %sign = arith.cmpi slt, %x, %z : i64
    %f = arith.select %sign, %neg, %one : i64
    "scf.reduce"(%x, %f, %x) ({
    ^bb1(%l: i64, %r: i64):
      %q = arith.addi %l, %r : i64
      "scf.reduce.return"(%q) : (i64) -> ()
    }, {
    ^bb1(%l: i64, %r: i64):
      %q = arith.muli %r, %l : i64
      "scf.reduce.return"(%q) : (i64) -> ()
    }, {
    ^bb1(%l: i64, %r: i64):
      %q = arith.maxsi %l, %r : i64
      "scf.reduce.return"(%q) : (i64) -> ()
    }) : (i64, i64, i64) -> ()
  }) : (index, index, index, index, index, index, i64, i64, i64) -> (i64, i64, i64)
  return %s#0, %s#1, %s#2 : i64, i64, i64
}
"""])


def test_plain_reductions_become_clauses_others_stay_serial():
    source = emit_c(parse(REDUCTIONS))
    assert "#pragma omp parallel for reduction(+:" in _body(source, "sum_f32")
    stats = _body(source, "stats_i64")
    assert [c.split(":")[0] for c in stats.split("reduction(")[1:]] == ["+", "*", "max"]
    assert "#pragma" not in _body(source, "fmax")  # float max: OpenMP's NaN rules differ
    assert "#pragma" not in _body(source, "sum_of_squares")  # not a plain combiner of the two arguments


@pytest.mark.sanitize
def test_reductions_inside_parallel_loops_are_correct():
    mod = compile_module(parse(REDUCTIONS))
    rng = np.random.default_rng(3)
    x = rng.standard_normal(10_001).astype(np.float32)
    assert mod.function("sum_f32")(x) == pytest.approx(float(x.astype(np.float64).sum()), abs=1e-2)
    v = rng.integers(-1000, 1000, (37, 29), dtype=np.int64)
    total, sign, top = mod.function("stats_i64")(v)
    assert (total, top) == (int(v.sum()), int(v.max()))
    assert sign == (-1) ** int((v < 0).sum())
    x[1234] = 7.5
    assert mod.function("fmax")(x) == np.float32(x.max())
    assert mod.function("sum_of_squares")(x) == pytest.approx(float((x.astype(np.float64) ** 2).sum()), rel=1e-4)


NESTED = """
func.func @outer_inner(%X: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %X, %c0 : memref<?x?xf32>
  %m = memref.dim %X, %c1 : memref<?x?xf32>
  "scf.parallel"(%c0, %n, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    %row = arith.index_cast %i : index to i32
    %rf = arith.sitofp %row : i32 to f32
    "scf.parallel"(%c0, %m, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
    ^bb1(%j: index):
      %x = memref.load %X[%i, %j] : memref<?x?xf32>
      %y = arith.addf %x, %rf : f32
      memref.store %y, %X[%i, %j] : memref<?x?xf32>
      "scf.reduce"() : () -> ()
    }) : (index, index, index) -> ()
    "scf.reduce"() : () -> ()
  }) : (index, index, index) -> ()
  return
}
"""


@pytest.mark.sanitize
def test_only_the_outermost_parallel_loop_is_an_omp_loop_and_checked_mode_keeps_it():
    source = emit_c(parse(NESTED))
    assert source.count("#pragma omp parallel") == 1 and "#pragma omp parallel for\n" in source
    checked = emit_c(parse(NESTED), checked=True)  # its checks are recorded in the region, reported after it
    assert checked.count("#pragma omp parallel for\n") == 1 and "loomh_defer(" in checked
    for mode in (False, True):
        x = np.arange(60, dtype=np.float32).reshape(12, 5)
        expected = x + np.arange(12, dtype=np.float32)[:, None]
        compile_module(parse(NESTED), checked=mode).function("outer_inner")(x)
        np.testing.assert_array_equal(x, expected)


CUBE = """
func.func @cube(%X: memref<?x?x?xi32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %n0 = memref.dim %X, %c0 : memref<?x?x?xi32>
  %n1 = memref.dim %X, %c1 : memref<?x?x?xi32>
  %n2 = memref.dim %X, %c2 : memref<?x?x?xi32>
  "scf.parallel"(%c0, %c0, %c0, %n0, %n1, %n2, %c1, %c1, %c1) <{operandSegmentSizes = array<i32: 3, 3, 3, 0>}> ({
  ^bb0(%i: index, %j: index, %k: index):
    %s = arith.addi %i, %j : index
    %t = arith.muli %s, %k : index
    %v = arith.index_cast %t : index to i32
    memref.store %v, %X[%i, %j, %k] : memref<?x?x?xi32>
    "scf.reduce"() : () -> ()
  }) : (index, index, index, index, index, index, index, index, index) -> ()
  return
}
"""


@pytest.mark.sanitize
def test_three_parallel_dims_collapse_the_outer_two():
    source = emit_c(parse(CUBE))
    assert source.count("#pragma omp parallel for collapse(2)\n") == 1
    x = np.full((5, 7, 9), -1, dtype=np.int32)
    compile_module(parse(CUBE)).function("cube")(x)
    i, j, k = np.indices(x.shape)
    np.testing.assert_array_equal(x, (i + j) * k)


SHIFT = """
func.func @shift(%A: memref<?xf32>, %B: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %A, %c0 : memref<?xf32>
  %n1 = arith.subi %n, %c1 : index
  scf.for %i = %c0 to %n1 step %c1 {
    %x = memref.load %A[%i] : memref<?xf32>
    %j = arith.addi %i, %c1 : index
    memref.store %x, %A[%j] : memref<?xf32>
  }
  scf.for %i = %c0 to %n step %c1 {
    %x = memref.load %A[%i] : memref<?xf32>
    %y = memref.load %B[%i] : memref<?xf32>
    %z = arith.addf %x, %y : f32
    memref.store %z, %B[%i] : memref<?xf32>
  }
  return
}
func.func private @helper(%A: memref<?xf32>) {
  return
}
"""


def test_native_mode_marks_only_independent_innermost_loops():
    source = emit_c(parse(SHIFT), native=True)
    body = _body(source, "shift")
    assert body.count("#pragma omp simd") == 1  # the A[i+1] = A[i] loop carries a dependence
    assert body.index("#pragma omp simd") > body.index("m1[v6] = v5;")  # on the second loop
    assert body.count("*restrict ") == 2
    assert "restrict" not in _body(source, "helper")  # private: callers may pass aliasing views
    matmul = emit_c(lower_to_c(matmul_ikj.module), native=True)
    inner = matmul.index("#pragma omp simd")
    assert matmul.count("#pragma omp simd") == 1 and matmul.count("for (", inner) == 1  # the j loop
    assert emit_c(parse(SHIFT)) == emit_c(parse(SHIFT), native=False)  # default C is unchanged


@pytest.mark.sanitize
def test_native_matmul_equals_numpy_and_refuses_aliasing_arguments():
    mod = compile_module(lower_to_c(matmul_ikj.module), native=True)
    assert "-march=native" in " ".join(compile_flags(False, native=True))
    rng = np.random.default_rng(5)
    a = rng.standard_normal((33, 19), dtype=np.float32)
    b = rng.standard_normal((19, 41), dtype=np.float32)
    c = np.zeros((33, 41), dtype=np.float32)
    fn = mod.function("matmul_ikj")
    fn(a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)
    sq = rng.standard_normal((8, 8), dtype=np.float32)
    with pytest.raises(LoomError, match="arguments 0 and 2 share memory") as info:
        fn(sq, np.eye(8, dtype=np.float32), sq)
    assert info.value.where == "@matmul_ikj"
    big = np.zeros((8, 16), dtype=np.float32)
    with pytest.raises(LoomError, match="arguments 1 and 2 share memory"):
        fn(sq, big[:, :8], big[:, 4:12])
    fn(sq, sq, np.zeros((8, 8), dtype=np.float32))  # two read-only aliases are fine
    broadcast = np.lib.stride_tricks.as_strided(np.zeros(8, dtype=np.float32), (8, 8), (0, 4))
    with pytest.raises(LoomError, match="overlaps itself"):
        mod.function("matmul_ikj").check((sq, sq, broadcast))


def test_native_and_openmp_are_part_of_the_cache_key(monkeypatch, tmp_path):
    monkeypatch.setenv("LOOM_CACHE_DIR", str(tmp_path))
    module = lower_to_c(matmul_ikj.module)
    plain = compile_module(module, native=False)
    monkeypatch.setenv("LOOM_NATIVE", "1")
    native = compile_module(module)
    assert native.so_path != plain.so_path and "restrict" in native.c_source
    par = compile_module(lower_to_c(stencil3x3_parallel.module))
    for so, expect in ((plain.so_path, False), (par.so_path, True)):  # -fopenmp: calls into libgomp
        out = subprocess.run(["nm", "-D", "--undefined-only", str(so)], capture_output=True, text=True, check=True)
        assert ("GOMP_parallel" in out.stdout) == expect


AXPY = """
func.func @axpy(%X: memref<?xf32>, %Y: memref<?xf32>, %a: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %X, %c0 : memref<?xf32>
  scf.for %i = %c0 to %n step %c1 {
    %x = memref.load %X[%i] : memref<?xf32>
    %y = memref.load %Y[%i] : memref<?xf32>
    %p = arith.mulf %x, %a : f32
    %s = arith.addf %p, %y : f32
    memref.store %s, %Y[%i] : memref<?xf32>
  }
  return
}
"""


@pytest.mark.sanitize
def test_restrict_function_of_hand_written_mlir_refuses_hostile_arguments():
    mod = compile_module(parse(AXPY), native=True)
    fn = mod.function("axpy")
    assert fn is mod.function("axpy")  # the checked callable is built once, not per lookup
    assert "*restrict " in mod.c_source
    x = np.arange(8, dtype=np.float32)
    y = np.ones(8, dtype=np.float32)
    fn(x, y, 2.0)
    np.testing.assert_array_equal(y, 2 * np.arange(8, dtype=np.float32) + 1)
    with pytest.raises(LoomError, match="dtype mismatch: expected float32"):
        fn(x.astype(np.float64), y, 2.0)
    with pytest.raises(LoomError, match="rank mismatch: expected 1 dims, got 2"):
        fn(x.reshape(2, 4), y, 2.0)
    shared = np.arange(16, dtype=np.float32)
    with pytest.raises(LoomError, match="arguments 0 and 1 share memory"):
        fn(shared[:8], shared[4:12], 2.0)
    read_only = np.ones(8, dtype=np.float32)
    read_only.flags.writeable = False
    with pytest.raises(LoomError, match="argument 1 of @axpy: the function may write"):
        fn(x, read_only, 2.0)
    fn(read_only, y, 1.0)  # read-only input of a read-only parameter is fine
    np.testing.assert_array_equal(y, 2 * np.arange(8, dtype=np.float32) + 1 + 1)
    fn(np.zeros(0, np.float32), np.zeros(0, np.float32), 2.0)  # zero-size: nothing to do
    fn(shared[:0], shared[:0], 2.0)  # empty views of one buffer do not alias


POLICY_CHILD = """
import os
from loom.examples.kernels import stencil3x3_parallel
from loom.backends.c import compile_module
from loom.passes.recipes import lower_to_c
compile_module(lower_to_c(stencil3x3_parallel.module))
print(os.environ.get("OMP_WAIT_POLICY"))
"""


@pytest.mark.parametrize("given, expected", [(None, "passive"), ("active", "active")])
def test_an_openmp_module_makes_waiting_threads_sleep_unless_told_otherwise(given, expected):
    """Spinning OpenMP threads competed with the other threads of a busy machine (a parallel blur 8 ms against 1.2
    serial): loading a parallel module sets OMP_WAIT_POLICY=passive first, and keeps a policy the user set."""
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"} | {"PYTHONPATH": ROOT}
    if given is not None:
        env["OMP_WAIT_POLICY"] = given
    child = subprocess.run([sys.executable, "-c", POLICY_CHILD], capture_output=True, text=True, env=env)
    assert child.returncode == 0, child.stderr[-3000:]
    assert child.stdout.strip().splitlines()[-1] == expected
