"""IR structure of traced kernels, checked against upstream mlir-opt and hand-derived expectations."""

import pytest
from xdsl.dialects import affine, scf
from xdsl.dialects.builtin import FileLineColLoc, MemRefType

import tests.frontends.kernel.kernel_frontend_samples as S
from tests.frontends.kernel.kernel_frontend_helpers import debug_text, line_of, ops_named, upstream_verify

SAMPLES = S.__file__


@pytest.mark.mlir
@pytest.mark.parametrize("k", S.ALL, ids=lambda k: k.name)
def test_every_sample_verifies_in_xdsl_and_upstream(k):
    m = k.module
    m.verify()
    upstream_verify(m)


def test_matmul_carries_accumulator_through_iter_args():
    m = S.matmul.module
    fors = ops_named(m, "scf.for")
    assert len(fors) == 3
    inner = fors[2]
    # acc is loop-carried: one iter_arg of f32, yielded from the body
    assert [str(t) for t in inner.result_types] == ["f32"]
    assert len(inner.iter_args) == 1
    y = inner.body.block.last_op
    assert isinstance(y, scf.YieldOp) and len(y.operands) == 1
    # the outer loops carry nothing (C[i, j] stores need no iter_args)
    assert len(fors[0].iter_args) == 0 and len(fors[1].iter_args) == 0
    # dynamic dims M, K, N come from memref.dim of the first params that have them
    assert len(ops_named(m, "memref.dim")) == 3


def test_matmul_signature_records_symbolic_dims():
    sig = S.matmul.signature
    assert [p.name for p in sig.params] == ["A", "B", "C"]
    assert sig.params[0].dims == ("M", "K")
    assert sig.dim_symbols["K"] == [("A", 1), ("B", 0)]
    assert sorted(len(g) for g in sig.equal_dims) == [2, 2, 2]
    assert isinstance(sig.params[0].xdsl_type, MemRefType)


def test_if_with_values_in_both_arms_yields_results():
    m = S.both_arms.module
    (ifop,) = ops_named(m, "scf.if")
    assert [str(t) for t in ifop.result_types] == ["f32", "f32"]
    for region in (ifop.true_region, ifop.false_region):
        y = region.block.last_op
        assert isinstance(y, scf.YieldOp) and len(y.operands) == 2
    # then-arm yields (x, y), else-arm yields (y, x): block args of the func
    x, y = m.body.block.first_op.body.block.args
    assert list(ifop.true_region.block.last_op.operands) == [x, y]
    assert list(ifop.false_region.block.last_op.operands) == [y, x]


def test_if_without_results_still_builds_both_regions():
    m = S.stencil.module
    (ifop,) = ops_named(m, "scf.if")
    assert ifop.result_types == () or len(ifop.result_types) == 0
    assert len(ifop.true_region.blocks) == 1 and len(ifop.false_region.blocks) == 1
    assert len(ops_named(ifop.false_region.block.parent_op(), "memref.store")) == 2


def test_affine_loops_when_requested():
    m = S.matmul_affine.module
    assert len(ops_named(m, "affine.for")) == 3 and not ops_named(m, "scf.for")
    # a bound depending on the outer induction variable stays affine: (d0) -> (d0 + 1)
    m2 = S.triangle_affine.module
    fors = ops_named(m2, "affine.for")
    assert len(fors) == 2
    inner = fors[1]
    assert isinstance(inner, affine.ForOp)
    assert list(inner.lowerBoundOperands) == [fors[0].body.block.args[0]]
    assert "d0 + 1" in str(inner.lowerBoundMap)


def test_scf_is_default_and_affine_falls_back_for_non_affine_bounds():
    assert not ops_named(S.matmul.module, "affine.for")


def test_call_emits_func_call_and_private_callee_once():
    m = S.double_call.module
    calls = ops_named(m, "func.call")
    assert sorted(c.callee.string_value() for c in calls) == ["scale_add", "uses_call", "uses_call"]
    funcs = {f.sym_name.data: f for f in m.body.block.ops}
    assert set(funcs) == {"double_call", "uses_call", "scale_add"}
    assert funcs["double_call"].sym_visibility is None
    assert funcs["uses_call"].sym_visibility.data == "private"


def test_parallel_loop():
    m = S.par_scale.module
    (p,) = ops_named(m, "scf.parallel")
    assert len(p.body.block.args) == 2
    assert not ops_named(m, "scf.for")


def test_while_loop_carries_both_variables():
    m = S.collatz.module
    (w,) = ops_named(m, "scf.while")
    assert [str(t) for t in w.result_types] == ["i32", "i32"]
    assert isinstance(w.before_region.block.last_op, scf.ConditionOp)


def test_scalar_params_and_results():
    f = S.poly.module.body.block.first_op
    assert [str(t) for t in f.function_type.inputs.data] == ["f64", "index"]
    assert [str(t) for t in f.function_type.outputs.data] == ["f64", "index"]
    # s = 0.0 is carried as f64 (from the body), k = 0 as index
    (loop,) = ops_named(S.poly.module, "scf.for")
    assert [str(t) for t in loop.result_types] == ["f64", "index"]


def test_subview_types_and_alloc_dealloc():
    m = S.tiles.module
    views = ops_named(m, "memref.subview")
    types = [str(v.result.type) for v in views]
    assert "memref<4x4xf32, strided<[8, 1], offset: ?>>" in types
    # A[3, 0:8:2]: rank-reduced, stride 2, offset 3*8 = 24
    assert "memref<4xf32, strided<[2], offset: 24>>" in types
    assert len(ops_named(m, "memref.alloc")) == 1 and len(ops_named(m, "memref.dealloc")) == 1
    assert len(ops_named(m, "memref.alloca")) == 1


def test_short_circuit_and_with_load_uses_scf_if():
    m = S.selects.module
    # `i > 0 and A[i - 1] > 0.0` and `A[i] if i < 4 else 0` read memory: scf.if, never an unguarded load
    assert len(ops_named(m, "scf.if")) == 2
    for ld in ops_named(m, "memref.load"):
        assert ld.parent_op().name == "scf.if"
    # the pure conditional expression becomes arith.select
    assert len(ops_named(m, "arith.select")) >= 1


def test_locations_point_at_user_lines():
    m = S.matmul.module
    (addf,) = ops_named(m, "arith.addf")
    loc = addf.location
    assert isinstance(loc, FileLineColLoc)
    assert loc.filename.data == SAMPLES
    assert loc.line.data == line_of(SAMPLES, "# MATMUL-ACC")
    (call,) = ops_named(S.uses_call.module, "func.call")
    assert call.location.line.data == line_of(SAMPLES, "# CALL-SITE")
    (ifop,) = ops_named(S.both_arms.module, "scf.if")
    assert ifop.location.line.data == line_of(SAMPLES, "# BOTH-ARMS-IF")
    assert f'"{SAMPLES}":{line_of(SAMPLES, "# MATMUL-ACC")}' in debug_text(m)
    # every op carries a file location (constants and dims get the line of their first use)
    for op in m.walk():
        if op.name not in ("builtin.module",):
            assert isinstance(op.location, FileLineColLoc), op.name


def test_module_is_cached_and_ir_text_matches():
    assert S.softmax.module is S.softmax.module
    assert S.softmax.ir() == str(S.softmax.module)
    assert "math.exp" in S.softmax.ir()


def test_math_functions_map_to_math_dialect():
    names = {op.name for op in S.math_mix.module.walk()}
    for n in ("math.exp", "math.log", "math.tanh", "math.sin", "math.cos", "math.floor", "math.ceil", "math.powf"):
        assert n in names


def test_integer_division_and_modulo_ops():
    names = [op.name for op in S.int_ops.module.walk()]
    assert "arith.floordivsi" in names and "arith.remsi" in names and "arith.shli" in names
    assert "arith.sitofp" in names and "arith.divf" in names
