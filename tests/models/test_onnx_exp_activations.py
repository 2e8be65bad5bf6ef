"""ONNX Elu, Selu and Softplus at small and large inputs, against onnx's reference (expm1, logaddexp).

They computed exp(x) - 1 and log(exp(x) + 1): 0 instead of x for |x| < 2^-24 (Elu), log(0) = -inf-free
but 0 for x < -17 (Softplus), and inf from x = 89 on (Softplus). Now expm1 and max(x, 0) + log1p(exp(-|x|))."""

from __future__ import annotations

import numpy as np
import pytest

from tests.models.helpers import one_node_model

pytest.importorskip("onnx")

from onnx.reference import ReferenceEvaluator  # noqa: E402

import loom.models  # noqa: E402

EDGES = np.array([0.0, -0.0, 1e-8, -1e-8, 3e-7, -3e-7, 1e-30, -1e-30, 1e-3, -1e-3, 0.5, -0.5,
                  20.0, -20.0, 40.0, -40.0, 88.0, 89.0, 100.0, -100.0, 1000.0, -1000.0, 3e38, -3e38],
                 np.float32).reshape(4, 6)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # the reference computes expm1 of both branches
@pytest.mark.parametrize("op, attrs", [("Elu", {}), ("Elu", {"alpha": 0.3}), ("Selu", {}), ("Softplus", {})])
def test_small_and_large_inputs_match_the_reference(op, attrs):
    model = one_node_model(op, {"x": ([4, 6], np.float32)}, ["y"], attrs)
    want = ReferenceEvaluator(model).run(None, {"x": EDGES})[0]
    got = loom.models.compile(model)(EDGES)
    assert np.isfinite(got).all()
    # relative to each element (tiny values are the point): a few ulp of libm's float functions
    np.testing.assert_allclose(got, want, rtol=4e-7, atol=0)
