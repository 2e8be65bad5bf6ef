"""``255 if p else 0``: a conditional of two literals takes the type of what it meets, as a lone literal does (it
was refused: "unsupported operands for conditional expression: a Python int and a Python int"). References: each
kernel as plain Python, numpy, upstream mlir-opt and mlir-runner."""

import numpy as np
import pytest

import tests.frontends.kernel.kernel_choice_kernels as C
from loom.errors import LoomError
from loom.oracle import mlir
from tests.frontends.kernel.kernel_frontend_helpers import line_of, ops_named, upstream_verify

RNG = np.random.default_rng(8)
ALL = [C.threshold, C.abs_and_pow2_flag, C.sign_of, C.merged_in_an_if, C.carried_from_a_choice, C.scale_by_sign,
       C.count_positive_index]


@pytest.mark.sanitize
def test_literal_choices_match_python():
    img = RNG.integers(0, 256, 40).astype(np.uint8)
    out = np.zeros_like(img)
    C.threshold(img, np.uint8(200), out)
    np.testing.assert_array_equal(out, np.where(img > 200, 255, 0).astype(np.uint8))
    x = np.array([0, 1, -1, 4, -8, 7, 2**30, -(2**31) + 1, 12], np.int32)
    y = np.zeros_like(x)
    C.abs_and_pow2_flag(x, y)
    want = [abs(int(v)) * 2 + (1 if v != 0 and (abs(int(v)) & (abs(int(v)) - 1)) == 0 else 0) for v in x]
    np.testing.assert_array_equal(y, np.array(want).astype(np.int32))
    assert C.sign_of(np.int32(5)) == 1 and C.sign_of(np.int32(-5)) == -1
    for _ in range(4):
        v = RNG.integers(-9, 9, 7).astype(np.int32)
        for k in (C.merged_in_an_if, C.carried_from_a_choice, C.count_positive_index):
            assert k(v) == k.__wrapped__(v), k.name
    f = RNG.normal(0, 1, 9).astype(np.float32)
    g = f.copy()
    C.scale_by_sign(g)
    np.testing.assert_array_equal(g, np.where(f > 0, f * np.float32(0.5), f * np.float32(2)))


def test_the_choice_has_the_type_of_its_use():
    stored = ops_named(C.threshold.module, "memref.store")[0].value
    assert stored.owner.name == "arith.select" and str(stored.type) == "i8"
    assert C.sign_of.result_types[0].width.data == 32
    assert str(C.count_positive_index.result_types[0]) == "index"


@pytest.mark.mlir
def test_upstream_mlir_agrees():
    for k in ALL:
        upstream_verify(k.module)
    img = np.array([10, 250, 201, 200], np.uint8)
    ran = mlir.run(C.threshold.module, "threshold", [img, np.uint8(200), np.zeros(4, np.uint8)])
    np.testing.assert_array_equal(ran.memrefs[2], [0, 255, 255, 0])
    v = np.array([3, -2, 7, 0, 9], np.int32)
    assert mlir.run(C.merged_in_an_if.module, "merged_in_an_if", [v]).results[0] == C.merged_in_an_if.__wrapped__(v)


def test_a_literal_that_does_not_fit_is_refused_at_its_line():
    with pytest.raises(LoomError) as info:
        C.too_big_for_u8.module
    assert info.value.line == line_of(C.__file__, "# C:u8big") and "300" in info.value.message


def test_a_math_function_of_a_choice_is_a_choice_of_its_values():
    # math.sqrt(4.0 if p else 9.0) folds per arm, as math.sqrt(4.0) folds: a literal that meets an f32 (it was an
    # f64 sqrt, then "type mismatch in '*': f64 and f32")
    x = np.array([0.25, 0.75, 1.0], np.float32)
    assert C.math_of_a_choice(x) == C.math_of_a_choice.__wrapped__(x)
    assert not ops_named(C.math_of_a_choice.module, "math.sqrt")


def test_a_math_domain_error_of_constants_is_reported_at_its_line():
    with pytest.raises(LoomError) as info:  # it was "internal error ... ValueError: math domain error"
        C.sqrt_of_minus_one.module
    assert info.value.line == line_of(C.__file__, "# C:sqrtneg")
    assert "math.sqrt(-1.0) of constants fails in Python (math domain error)" in info.value.message
