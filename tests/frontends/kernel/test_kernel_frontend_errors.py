"""Error catalogue: every bad kernel raises LoomError naming this suite's file and the exact line."""

import pytest

import tests.frontends.kernel.kernel_frontend_bad as B
from tests.frontends.kernel.kernel_frontend_helpers import line_of
from loom.errors import LoomError

BAD = B.__file__

# (kernel, marker, words the message must contain)
CASES = [
    (B.bad_try, "E:try", "try"),
    (B.bad_with, "E:with", "with"),
    (B.bad_break, "E:break", "break"),
    (B.bad_continue, "E:continue", "continue"),
    (B.bad_global, "E:global", "global"),
    (B.bad_lambda, "E:lambda", "lambda"),
    (B.bad_def_call, "E:defcall", "takes *args"),
    (B.bad_yield, "E:yield", "yield"),
    (B.bad_annotation_int, "E:annint", "not a kernel type"),
    (B.bad_annotation_elt, "E:annelt", "element type"),
    (B.bad_missing_annotation, "E:annmissing", "needs a type annotation"),
    (B.bad_rank, "E:rank", "rank 2"),
    (B.bad_mix_f32_i32, "E:mixfi", "f32 and i32"),
    (B.bad_mix_f32_f64, "E:mixff", "f32 and f64"),
    (B.bad_mix_index_i32, "E:mixii", "index and i32"),
    (B.bad_float_literal, "E:floatlit", "float literal"),
    (B.bad_store_type, "E:storetype", "f32"),
    (B.bad_closure_list, "E:closurelist", "closure over non-constant"),
    (B.bad_closure_array, "E:closurearr", "dtype complex64 cannot be a kernel table"),
    (B.bad_return_types, "E:rettypes", "inconsistent return types"),
    (B.bad_return_in_loop, "E:retloop", "annotate them"),
    (B.bad_loop_local, "E:looplocal", "defined inside the loop"),
    (B.bad_one_arm, "E:onearm", "only one branch"),
    (B.bad_unknown_name, "E:unknown", "unknown name 'undefined_thing'"),
    (B.bad_python_call, "E:pycall", "unsupported Python function"),
    (B.bad_print, "E:print", "print"),
    (B.bad_range_kwargs, "E:rangekw", "keyword"),
    (B.bad_star_args, "E:starargs", "star-args"),
    (B.bad_augassign_undefined, "E:augundef", "undefined variable 'total'"),
    (B.bad_augassign_target, "E:augtarget", "augmented assignment target"),
    (B.bad_if_type_mismatch, "E:ifmismatch", "f32 in the then-branch and f64"),
    (B.bad_index_type, "E:indextype", "Index(x)"),
    (B.bad_while_true, "E:whiletrue", "constant conditions"),
    (B.bad_int_division, "E:intdiv", "'//'"),
    (B.bad_call_arity, "E:arity", "takes 2 argument"),
    (B.bad_call_type, "E:calltype", "expects f32 but got f64"),
    (B.bad_chain_types, "E:chain", "index and f32"),
    (B.bad_parallel_carry, "E:parcarry", "cannot update variables"),
    (B.bad_memref_arith, "E:memrefarith", "memref"),
    (B.bad_star_params, "E:starparams", "*args"),
    (B.bad_matmul_op, "E:matmulop", "loom.linalg.matmul"),  # was an internal KeyError
    (B.bad_matmul_aug, "E:matmulaug", "operator '@'"),
    (B.bad_bool_arith, "E:boolarith", "convert it with I32(c)"),
    (B.bad_iv_after_break, "E:ivafterbreak", "e.g. 'found = i' before a break"),
    (B.bad_sum_builtin, "E:sumbuiltin", "accumulate in a loop"),
    (B.bad_max_of_memref, "E:maxmemref", "for v in X: m = max(m, v)"),
    (B.bad_round, "E:round", "half to even"),
]


@pytest.mark.parametrize("kernel,marker,words", CASES, ids=[c[1] for c in CASES])
def test_bad_kernel_reports_file_and_line(kernel, marker, words):
    with pytest.raises(LoomError) as info:
        kernel.module
    e = info.value
    assert e.filename == BAD
    assert e.line == line_of(BAD, "# " + marker), str(e)
    assert words in e.message, e.message
    # the rendered message starts with file:line so the CLI can print it without a traceback
    assert str(e).startswith(f"{BAD}:{e.line}")


def test_catalogue_is_large_and_distinct():
    assert len({c[1] for c in CASES}) == len(CASES) >= 12


def test_errors_carry_construct_names():
    for kernel, construct in [(B.bad_try, "try"), (B.bad_break, "break"), (B.bad_global, "global"),
                              (B.bad_closure_list, "closure")]:
        with pytest.raises(LoomError) as info:
            kernel.module
        assert info.value.construct == construct


def test_no_internal_traceback_leaks():
    # internal exceptions are chained at most; what users see is a LoomError
    for kernel, _, _ in CASES:
        try:
            kernel.module
        except LoomError:
            pass
        else:  # pragma: no cover - every case must fail
            raise AssertionError(kernel.name)
