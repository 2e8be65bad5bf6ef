"""F.normalize / linalg.vector_norm / ONNX LpNormalization, torch.roll and argmax / argmin (torch's and ONNX's) were
refused as unsupported ops. Norms are reductions and element-wise layers, rolls gathers of constant positions,
argmax / argmin a loop layer of their own; each checked against torch or onnx's reference, ties, NaN, zero and
eps-dominated norms and negative shifts included."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
F = torch.nn.functional

import loom.models  # noqa: E402
from loom.errors import LoomError  # noqa: E402

from tests.models.helpers import one_node_model, run_against_torch  # noqa: E402


def _rows():
    x = torch.randn(3, 5, 4, generator=torch.Generator().manual_seed(1))
    x[0, :, 1] = 0.0  # a zero column: every norm is 0, so max(norm, eps) divides
    x[1, :, 2] = 1e-14  # a norm below eps = 1e-12 for p = 2 (eps-dominated)
    return x


class Normalize(torch.nn.Module):
    def forward(self, x):
        return (F.normalize(x, dim=1), F.normalize(x, p=1.0, dim=-1), F.normalize(x, p=3.0, dim=1, eps=1e-3),
                F.normalize(x, p=float("inf"), dim=0), torch.linalg.vector_norm(x, 0.5, dim=(0, 2)),
                torch.linalg.vector_norm(x), torch.linalg.vector_norm(x, float("-inf"), dim=1, keepdim=True),
                torch.linalg.vector_norm(x, 0, dim=1))


def test_normalize_and_vector_norms_equal_torch():
    got, want = run_against_torch(Normalize(), _rows())
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w.numpy(), rtol=2e-6, atol=1e-30)
    eps_dominated = want[0].numpy()[1, :, 2]  # 1e-14 / 1e-12 (torch divides by eps, not by the norm)
    np.testing.assert_allclose(got[0][1, :, 2], eps_dominated, rtol=1e-6)
    assert np.allclose(eps_dominated, 1e-2) and np.all(got[0][0, :, 1] == 0)


class Rolls(torch.nn.Module):
    def forward(self, x):
        return (torch.roll(x, 1, 2), torch.roll(x, (-1, 7), (1, -1)), torch.roll(x, -5), torch.roll(x, 4, 0),
                torch.roll(x, (2, 2), (2, 2)))


def test_roll_equals_torch():
    x = torch.arange(24, dtype=torch.float32).reshape(2, 3, 4)
    got, want = run_against_torch(Rolls(), x)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w.numpy())
    assert not np.array_equal(got[1], x.numpy()) and np.array_equal(got[3], x.numpy())  # 4 mod 2 == 0


class ArgReductions(torch.nn.Module):
    def forward(self, x, i):
        return (torch.argmax(x, 1), torch.argmin(x, dim=-1, keepdim=True), torch.argmax(x), torch.argmin(x),
                torch.argmax(x, keepdim=True), torch.argmax(i, 0), torch.argmin(i, dim=1))


def test_argmax_argmin_equal_torch_with_ties_and_nan():
    x = torch.tensor([[[1.0, 3.0, 3.0, -2.0], [0.0, float("nan"), 5.0, float("nan")], [4.0, 4.0, 4.0, 4.0]],
                      [[-1.0, -1.0, 2.0, -7.0], [9.0, 9.0, -7.0, -7.0], [float("-inf"), 0.0, float("inf"), 1.0]]])
    i = torch.tensor([[3, -1, 3], [3, 8, 8], [-4, 0, -4]])
    got, want = run_against_torch(ArgReductions(), x, i)
    for g, w in zip(got, want):
        assert g.dtype == np.int64 and g.shape == tuple(w.shape)
        np.testing.assert_array_equal(g, w.numpy())
    assert got[1][0, 1, 0] == 1 and got[2] == 5  # the first NaN is both the min and the max


def test_boolean_indexing_is_refused_saying_why():
    class Masked(torch.nn.Module):
        def forward(self, x):
            return x[x > 0]

    with pytest.raises(LoomError, match="data-dependent shape.*static"):
        loom.models.compile(Masked(), (torch.randn(3, 4),))


# ---------------------------------------------------------------- ONNX


def _reference(model, **feeds):
    pytest.importorskip("onnx")
    from onnx.reference import ReferenceEvaluator

    return ReferenceEvaluator(model).run(None, feeds)[0]


@pytest.mark.parametrize("op", ["ArgMax", "ArgMin"])
@pytest.mark.parametrize("attrs", [{"axis": 1}, {"axis": -1, "keepdims": 0}, {"axis": 0, "select_last_index": 1},
                                   {"axis": 2, "keepdims": 0, "select_last_index": 1}])
def test_onnx_argmax_argmin_equal_the_reference(op, attrs):
    x = np.array([[[1, 3, 3, -2], [0, np.nan, 5, np.nan], [4, 4, 4, 4]],
                  [[-1, -1, 2, -7], [9, 9, -7, -7], [-np.inf, 0, np.inf, 1]]], np.float32)
    model = one_node_model(op, {"x": (list(x.shape), np.float32)}, ["y"], attrs, opset=13)
    got = loom.models.compile(model)(x)
    np.testing.assert_array_equal(got, _reference(model, x=x))


def test_onnx_lp_normalization_equals_the_reference():
    x = np.abs(np.random.default_rng(0).standard_normal((2, 3, 4)).astype(np.float32))
    x[1, :, 0] = 0.0  # a zero norm gives 0, not NaN
    for p, axis in ((2, 1), (1, -1), (2, 0)):
        model = one_node_model("LpNormalization", {"x": ([2, 3, 4], np.float32)}, ["y"], {"p": p, "axis": axis})
        got = loom.models.compile(model)(x)
        np.testing.assert_allclose(got, _reference(model, x=x), rtol=1e-6, atol=0)


def test_onnx_l1_normalization_takes_absolute_values():
    """onnx's reference raises x itself to p (a p=1 norm of [3, -4] would be -1); the spec and its node tests
    use |x|, as loom does."""
    x = np.array([[3.0, -4.0], [-6.0, 2.0]], np.float32)
    model = one_node_model("LpNormalization", {"x": ([2, 2], np.float32)}, ["y"], {"p": 1, "axis": 1})
    np.testing.assert_allclose(loom.models.compile(model)(x), x / np.abs(x).sum(1, keepdims=True), rtol=1e-7)


def test_onnx_lp_normalization_of_order_3_is_refused_naming_the_node():
    model = one_node_model("LpNormalization", {"x": ([2, 2], np.float32)}, ["y"], {"p": 3})
    with pytest.raises(LoomError, match=r"LpNormalization.*p=3"):
        loom.models.compile(model)


def test_onnx_nonzero_is_refused_saying_why():
    model = one_node_model("NonZero", {"x": ([2, 3], np.float32)}, ["y"])
    with pytest.raises(LoomError, match=r"\(NonZero\).*output shape depends on the input's values"):
        loom.models.compile(model)


def test_a_float64_module_computes_in_double():
    """float64 tensors were refused; a double module (linear, normalize, softmax, roll, argmax) now equals torch to
    double precision, where float32 arithmetic would be ~1e-7 off."""
    class Double(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.linear = torch.nn.Linear(6, 5).double()

        def forward(self, x):
            y = F.normalize(self.linear(x), dim=-1)
            return torch.softmax(torch.roll(y, 2, 1) * 3, -1), torch.argmax(y, 1)

    x = torch.randn(4, 6, dtype=torch.float64, generator=torch.Generator().manual_seed(3))
    got, want = run_against_torch(Double(), x)
    assert got[0].dtype == np.float64
    np.testing.assert_allclose(got[0], want[0].detach().numpy(), rtol=1e-13)
    np.testing.assert_array_equal(got[1], want[1].numpy())
