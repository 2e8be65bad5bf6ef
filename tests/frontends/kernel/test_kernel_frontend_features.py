"""Intrinsic calls, name resolution, constant folding, casts and source-reading corner cases."""

import numpy as np
import pytest

import tests.frontends.kernel.kernel_frontend_features as F
from tests.frontends.kernel.kernel_frontend_helpers import backend_available, line_of, ops_named, upstream_verify
from loom.errors import LoomError

FEAT = F.__file__
needs_backend = pytest.mark.skipif(not backend_available(), reason="C backend / recipes not available yet")


@pytest.mark.parametrize("k", [F.mm_linalg, F.generic_lambda, F.generic_def, F.folded_if, F.chained, F.casts,
                               F.Holder.scale, F.make_closure(3)], ids=lambda k: k.name)
def test_verifies_upstream(k):
    upstream_verify(k.module)


def test_intrinsic_ops_land_in_place_with_locations():
    m = F.mm_linalg.module
    (mm,) = ops_named(m, "linalg.matmul")
    assert mm.location.line.data == line_of(FEAT, "# LINALG-MATMUL")


def test_lambda_and_def_bodies_become_generic_regions():
    (g,) = ops_named(F.generic_lambda.module, "linalg.generic")
    names = [op.name for op in g.body.block.ops]
    assert names[-1] == "linalg.yield" and "arith.mulf" in names and "arith.addf" in names
    (g2,) = ops_named(F.generic_def.module, "linalg.generic")
    # the def body reads the kernel scalar parameter s from the enclosing kernel
    s = F.generic_def.module.body.block.first_op.body.block.args[2]
    assert any(s in op.operands for op in g2.body.block.ops)


def test_constant_if_is_folded_and_numpy_scalars_are_typed():
    m = F.folded_if.module
    assert not ops_named(m, "scf.if")
    stored = [op.operands[0].owner for op in ops_named(m, "memref.store")]
    assert any(getattr(o, "value", None) is not None and o.value.value.data == 1.0 for o in stored)
    (loop,) = ops_named(m, "scf.for")
    assert loop.ub.owner.value.value.data == 4  # N_CONST closure constant


def test_chained_comparison_is_a_conjunction():
    names = [op.name for op in F.chained.module.walk()]
    assert names.count("arith.cmpf") == 2 and "arith.andi" in names


def test_cast_ops():
    names = {op.name for op in F.casts.module.walk()}
    assert {"arith.extf", "arith.fptosi", "arith.index_cast", "arith.sitofp", "arith.extui"} <= names


def test_method_and_custom_name_and_closure():
    assert F.Holder.scale.name == "method_kernel"
    assert "func.func @method_kernel" in F.Holder.scale.ir()
    k3 = F.make_closure(3)
    assert "arith.constant 3 : i32" in k3.ir()


def test_closure_over_list_names_line():
    k = F.make_bad_closure()
    with pytest.raises(LoomError) as info:
        k.module
    assert info.value.filename == FEAT and info.value.line == line_of(FEAT, "# BAD-CLOSURE")
    assert "closure over non-constant value 'table'" in info.value.message


def test_intrinsic_error_gets_call_location():
    with pytest.raises(LoomError) as info:
        F.bad_intrinsic_args.module
    assert info.value.filename == FEAT and info.value.line == line_of(FEAT, "# BAD-INTRINSIC")


def test_recursion_is_reported():
    with pytest.raises(LoomError, match="recursive"):
        F.recursive.module


def test_kernel_without_source_is_a_loom_error():
    import loom

    ns = {"loom": loom, "F32": F.F32}
    exec("def f(x: F32) -> F32:\n    return x\n", ns)
    k = loom.kernel(ns["f"])
    with pytest.raises(LoomError, match="cannot read the source"):
        k.module


@needs_backend
def test_intrinsics_execute():
    rng = np.random.default_rng(1)
    A, B = rng.standard_normal((4, 3)).astype(np.float32), rng.standard_normal((3, 5)).astype(np.float32)
    C = np.zeros((4, 5), np.float32)
    F.mm_linalg(A, B, C)
    np.testing.assert_allclose(C, A @ B, rtol=1e-5, atol=1e-5)
    X = rng.standard_normal((4, 4)).astype(np.float32)
    Y = np.zeros_like(X)
    F.generic_lambda(X, Y)
    np.testing.assert_allclose(Y, X * 0.5 + 1.0, rtol=1e-6)
    acc = np.ones(4, np.float32)
    F.generic_def(X, acc, np.float32(2.0))
    np.testing.assert_allclose(acc, 1.0 + 2.0 * X.sum(axis=1), rtol=1e-5)


@needs_backend
def test_closure_and_casts_execute():
    A = np.arange(4, dtype=np.int32)
    F.make_closure(5)(A)
    np.testing.assert_array_equal(A, np.arange(4) + 5)
    r = F.casts(np.float32(-2.75), np.int32(7), 3)
    assert r[0] == pytest.approx(-2.75) and r[1] == -2 and r[2] == 10 and r[3] == 3.0 and r[4] == 0
    assert F.chained(np.float32(0.5), np.float32(0.0), np.float32(1.0)) == 1
    assert F.chained(np.float32(1.0), np.float32(0.0), np.float32(1.0)) == 0


@pytest.mark.parametrize("kernel,marker,words", [
    (F.iv_after_loop, "# IV-AFTER", "induction variable"),
    (F.while_local, "# WHILE-LOCAL", "defined inside the while loop"),
    (F.loop_type_change, "# TYPE-CHANGE", "changes type inside the loop"),
], ids=["iv", "while-local", "type-change"])
def test_scoping_errors(kernel, marker, words):
    with pytest.raises(LoomError) as info:
        kernel.module
    e = info.value
    assert e.filename == FEAT and words in e.message
    if marker != "# TYPE-CHANGE":  # the type change is reported at the loop header
        assert e.line == line_of(FEAT, marker)
    else:
        assert e.line == line_of(FEAT, marker) - 1


def test_constant_initialised_counter_becomes_index_iter_arg():
    m = F.count_positive.module
    (loop,) = ops_named(m, "scf.for")
    assert [str(t) for t in loop.result_types] == ["index"]
    upstream_verify(m)


@needs_backend
def test_counter_executes():
    A = np.array([1.0, -1.0, 2.0, 0.0, 3.0], np.float32)
    assert F.count_positive(A) == 3


@needs_backend
@pytest.mark.parametrize("x,y,n", [(7.5, 2.0, 5), (-7.5, 2.0, -4), (7.5, -2.0, 0)])
def test_float_and_unary_semantics_follow_python(x, y, n):
    upstream_verify(F.float_ops.module)
    r = F.float_ops(x, y, np.int32(n))
    assert r[0] == pytest.approx(x % y)
    assert r[1] == pytest.approx(x // y)
    assert r[2] == pytest.approx(x**5)
    assert r[3] == pytest.approx(-x + float(not (x < y)))
    assert r[4] == ~n and r[5] == (-n) % 3


def test_return_in_every_arm_of_a_final_if():
    m = F.sign.module
    upstream_verify(m)
    outer = [op for op in ops_named(m, "scf.if") if op.parent_op().name == "func.func"]
    assert len(outer) == 1 and [str(t) for t in outer[0].result_types] == ["f32"]


def test_result_type_inferred_without_annotation():
    assert [str(t) for t in F.row_sum_unannotated.result_types] == ["f64"]
    upstream_verify(F.row_sum_unannotated.module)


@needs_backend
def test_sign_and_row_sum_execute():
    assert [F.sign(np.float32(v)) for v in (2.0, -3.0, 0.0)] == [1.0, -1.0, 0.0]
    A = np.arange(12, dtype=np.float64).reshape(3, 4)
    assert F.row_sum_unannotated(A, 2) == pytest.approx(A[2].sum())


def test_loom_math_outside_kernels_is_python_math():
    import math

    import loom

    lm = loom.math
    assert lm.fabs(-2.5) == 2.5 and lm.abs(-3.0) == 3.0
    assert lm.rsqrt(4.0) == 0.5 and lm.fma(2.0, 3.0, 4.0) == 10.0
    assert lm.exp(0.3) == math.exp(0.3) and lm.atan2(1.0, -2.0) == math.atan2(1.0, -2.0)


def test_loom_math_extras_emit_math_ops():
    names = {op.name for op in F.loom_math_extras.module.walk()}
    assert {"math.rsqrt", "math.fma", "math.absf"} <= names
    upstream_verify(F.loom_math_extras.module)


@needs_backend
def test_loom_math_extras_execute():
    x, y = 6.25, -1.5
    r = F.loom_math_extras(x, y)
    assert r[0] == pytest.approx(0.4) and r[1] == pytest.approx(x * y + 0.5)
    assert r[2] == 1.5 and r[3] == 1.5
