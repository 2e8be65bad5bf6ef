"""Linear and cubic resizing (ONNX Resize, F.interpolate bilinear / linear / bicubic) were refused; each resized axis
is now a weighted sum of gathers of constant neighbour positions (loom.models.resize). Checked against onnx's
reference, onnx's own Resize node cases (their scales made constants) and torch, with non-square sizes, scales
below 1 and one-pixel outputs."""

from __future__ import annotations

import numpy as np
import pytest

import loom.models
from loom.errors import LoomError

from tests.models.helpers import relative_error, resize_model, run_against_torch

X = np.random.default_rng(7).standard_normal((2, 3, 4, 5)).astype(np.float32)


def _reference(model, x=X):
    pytest.importorskip("onnx")
    from onnx.reference import ReferenceEvaluator

    return ReferenceEvaluator(model).run(None, {"x": x})[0]


@pytest.mark.parametrize("mode", ["linear", "cubic"])
@pytest.mark.parametrize("coordinates", ["half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric",
                                         "half_pixel_symmetric"])
def test_onnx_linear_and_cubic_resize_equal_the_reference(mode, coordinates):
    attrs = {"mode": mode, "coordinate_transformation_mode": coordinates}
    for model in (resize_model(attrs, scales=[1, 1, 1.5, 0.6], shape=X.shape),  # up one axis, down the other
                  resize_model(attrs, sizes=[2, 3, 7, 1], shape=X.shape),  # a one-pixel axis
                  resize_model({**attrs, "cubic_coeff_a": -0.5, "exclude_outside": 1}, sizes=[1, 3, 3, 9],
                               shape=X.shape, opset=18)):
        want = _reference(model)
        got = loom.models.compile(model)(X)
        assert relative_error(got, want) < 1e-6, (model.graph.node[0], relative_error(got, want))


def test_onnx_resize_node_cases_pass_with_constant_scales():
    """onnx's 39 Resize node cases give scales / sizes / roi as graph inputs (refused: shapes must be static); as
    initializers every one runs and equals the case's expected output (antialias, tf_crop_and_resize, axes and
    keep_aspect_ratio_policy included)."""
    pytest.importorskip("onnx")
    from onnx import numpy_helper

    from loom.models.onnx_conformance import node_cases, run_model

    results = []
    for case in node_cases(("resize",)):
        (x, *rest), expected = case.data_sets[0]
        graph = case.model.graph
        for inp, value in zip(list(graph.input)[1:], rest):
            graph.initializer.append(numpy_helper.from_array(np.asarray(value), inp.name))
        del graph.input[1:]
        results.append(run_model(case.name, case.model, [np.asarray(x)], [np.asarray(e) for e in expected]))
    assert len(results) >= 39 and all(r.status == "pass" for r in results), [
        (r.name, r.message) for r in results if r.status != "pass"]


def test_resize_with_run_time_scales_is_refused_naming_the_node():
    onnx = pytest.importorskip("onnx")
    from onnx import helper

    node = helper.make_node("Resize", ["x", "", "s"], ["y"], name="up", mode="linear")
    graph = helper.make_graph([node], "r", [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [1, 1, 2, 2]),
                                            helper.make_tensor_value_info("s", onnx.TensorProto.FLOAT, [4])],
                              [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    with pytest.raises(LoomError, match=r"'up' \(Resize\).*scales \(input 2\) must be known at import .* it is "
                                        r"the model input 's'"):
        loom.models.compile(model)


@pytest.mark.parametrize("attrs, given, message", [
    ({"mode": "linear"}, {"scales": [1, 2, 2]}, "scales has 3 values for 4 axes"),
    ({"mode": "cubic", "axes": [5]}, {"scales": [2.0]}, "axis 5 is out of range for rank 4"),
    ({"mode": "linear"}, {"sizes": [2, 3, -1, 4]}, r"empty output shape \[2, 3, -1, 4\]"),
    ({"mode": "linear"}, {}, "needs constant scales or sizes"),
])
def test_malformed_resize_is_refused_naming_the_node(attrs, given, message):
    with pytest.raises(LoomError, match=rf"'up' \(Resize\).*{message}"):
        loom.models.compile(resize_model(attrs, shape=X.shape, **given))


def test_tf_crop_and_resize_without_roi_is_refused():
    model = resize_model({"mode": "linear", "coordinate_transformation_mode": "tf_crop_and_resize"},
                         scales=[1, 1, 2, 2], shape=X.shape)
    with pytest.raises(LoomError, match=r"'up' \(Resize\).*needs a constant roi"):
        loom.models.compile(model)


# ---------------------------------------------------------------- torch


def test_torch_bilinear_linear_and_bicubic_equal_torch():
    torch = pytest.importorskip("torch")
    F = torch.nn.functional

    class Interpolate(torch.nn.Module):
        def forward(self, x):
            return (F.interpolate(x, scale_factor=2, mode="bilinear"),
                    F.interpolate(x, size=(3, 7), mode="bilinear", align_corners=True),
                    F.interpolate(x, scale_factor=(0.5, 1.7), mode="bilinear"),  # a factor below 1
                    F.interpolate(x, size=(1, 2), mode="bilinear"),  # torch samples the middle, not the corner
                    F.interpolate(x, size=(1, 9), mode="bilinear", align_corners=True),
                    F.interpolate(x.flatten(2), scale_factor=1.5, mode="linear", align_corners=True),
                    F.interpolate(x, scale_factor=2, mode="bicubic"),
                    F.interpolate(x, size=(3, 6), mode="bicubic", align_corners=True))

    got, want = run_against_torch(Interpolate(), torch.from_numpy(X))
    for g, w in zip(got, want):
        assert relative_error(g, w.numpy()) < 1e-6
