"""F.interpolate(mode='nearest') / nn.Upsample (upsample_nearest2d) and ONNX Resize in nearest mode with
whole-number scales (U-Net / FPN / YOLO necks): refused at import before; now a broadcast copy between
free views, equal to torch and to onnx's reference; other torch sizes are gathers of torch's positions. Other
modes, and fractional ONNX scales, are refused."""

from __future__ import annotations

import numpy as np
import pytest

from loom.errors import LoomError

torch = pytest.importorskip("torch")
nn = torch.nn
F = torch.nn.functional

import loom.models  # noqa: E402

from tests.models.helpers import resize_model as _resize_model  # noqa: E402


class Neck(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 1)

    def forward(self, x):
        y = self.conv(x)
        return (F.interpolate(y, scale_factor=2, mode="nearest"), F.interpolate(x, size=(9, 8)),
                nn.Upsample(scale_factor=(2, 3))(x), torch.cat([F.interpolate(y, scale_factor=1), y], 1))


@pytest.mark.sanitize  # loops and indexed loads / broadcast copies in the generated C
def test_nearest_upsampling_equals_torch():
    torch.manual_seed(0)
    model, x = Neck().eval(), torch.randn(2, 3, 3, 4)
    got = loom.models.compile(model, (x,))(x.numpy())
    with torch.no_grad():
        want = model(x)
    for k, (g, w) in enumerate(zip(got, want, strict=True)):
        if k in (1, 2):  # copies of x: exact
            np.testing.assert_array_equal(g, w.numpy())
        else:  # copies of the conv's output, whose sums may round in another order than torch's
            np.testing.assert_allclose(g, w.numpy(), rtol=1e-5, atol=1e-6)
    # the upsampling itself is exact: each copy of loom's own conv output
    np.testing.assert_array_equal(got[0], got[3][:, :4].repeat(2, axis=2).repeat(2, axis=3))


FRACTIONAL = [{"scale_factor": 1.5}, {"scale_factor": (2.5, 1.25)}, {"size": (5, 9)}, {"scale_factor": 0.5},
              {"scale_factor": 1.7}]


def test_fractional_and_downsampling_nearest_equal_torch():
    """Scale factors that are no whole number were refused; each axis is a gather of PyTorch's source
    positions (floor(i / scale) in float32, as ATen's nearest_idx). (One model with an output per form: one
    export and one compile.)"""
    class Fractional(nn.Module):
        def forward(self, x):
            return tuple(F.interpolate(x, **kwargs) for kwargs in FRACTIONAL)

    x = torch.randn(1, 2, 7, 6)
    compiled = loom.models.compile(Fractional(), (x,))
    for kwargs, got, want in zip(FRACTIONAL, compiled(x.numpy()), Fractional()(x), strict=True):
        np.testing.assert_array_equal(got, want.numpy(), err_msg=str(kwargs))


# ---------------------------------------------------------------- ONNX Resize


@pytest.mark.parametrize("attrs", [
    {},  # half_pixel / round_prefer_floor, the defaults
    {"coordinate_transformation_mode": "asymmetric", "nearest_mode": "floor"},  # torch.onnx.export's form
    {"coordinate_transformation_mode": "pytorch_half_pixel", "nearest_mode": "round_prefer_ceil"},
])
def test_resize_nearest_equals_the_reference(attrs):
    from onnx.reference import ReferenceEvaluator

    x = np.random.default_rng(3).standard_normal((2, 3, 3, 4)).astype(np.float32)
    for model in (_resize_model(attrs, scales=[1, 1, 2, 3]), _resize_model(attrs, sizes=[2, 3, 9, 4])):
        want = ReferenceEvaluator(model).run(None, {"x": x})[0]
        np.testing.assert_array_equal(loom.models.compile(model)(x), want)


def test_fractional_and_down_scales_equal_the_reference():
    """Fractional and downscaling nearest Resize (refused before: a gather of the reference's positions now)."""
    from onnx.reference import ReferenceEvaluator

    x = np.random.default_rng(5).standard_normal((2, 3, 3, 4)).astype(np.float32)
    for attrs, scales in (({}, [1, 1, 1.5, 2]), ({}, [1, 1, 0.5, 0.5]),
                          ({"coordinate_transformation_mode": "asymmetric"}, [1, 1, 2, 2])):
        model = _resize_model(attrs, scales=scales)
        np.testing.assert_array_equal(loom.models.compile(model)(x), ReferenceEvaluator(model).run(None, {"x": x})[0])


@pytest.mark.parametrize("attrs, scales, message", [
    ({"mode": "area"}, [1, 1, 2, 2], "mode='area' is not supported"),
    ({"coordinate_transformation_mode": "centre"}, [1, 1, 2, 2], "coordinate_transformation_mode='centre'"),
    ({"nearest_mode": "up"}, [1, 1, 2, 2], "nearest_mode='up' is not supported"),
    ({}, [1, 1, 0.1, 2], r"empty output shape \[2, 3, 0, 8\]"),
])
def test_unsupported_resize_is_refused_naming_the_node(attrs, scales, message):
    with pytest.raises(LoomError, match=rf"'up' \(Resize\).*{message}"):
        loom.models.compile(_resize_model(attrs, scales=scales))


@pytest.mark.parametrize("opset", [8, 9])
def test_upsample_of_older_opsets_repeats_each_element(opset):
    pytest.importorskip("onnx")
    from onnx import TensorProto, helper, numpy_helper
    from onnx.reference import ReferenceEvaluator

    scales = np.array([1, 1, 2, 3], np.float32)
    if opset == 8:
        node, inits = helper.make_node("Upsample", ["x"], ["y"], scales=scales.tolist()), []
    else:
        node, inits = helper.make_node("Upsample", ["x", "s"], ["y"]), [numpy_helper.from_array(scales, "s")]
    graph = helper.make_graph([node], "u", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 3, 4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 7
    x = np.random.default_rng(4).standard_normal((1, 2, 3, 4)).astype(np.float32)
    got = loom.models.compile(model)(x)
    np.testing.assert_array_equal(got, x.repeat(2, axis=2).repeat(3, axis=3))
    if opset == 9:  # (onnx's reference evaluator does not run opset 8's scales attribute)
        np.testing.assert_array_equal(got, ReferenceEvaluator(model).run(None, {"x": x})[0])


# ---------------------------------------------------------------- 1-d (N, C, L)


class Neck1d(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(2, 3, 3, padding=1)

    def forward(self, x):
        y = self.conv(x)
        return (F.interpolate(x, scale_factor=2, mode="nearest"), nn.Upsample(scale_factor=3)(y),
                F.interpolate(x, size=10), x[:, [0, 1, 1]], x[:, :, [4, 0, 1, 2]])


def test_1d_nearest_upsampling_and_constant_indexing_equal_torch():
    """torch.export writes 1-d nearest upsampling as x[:, :, (arange(2L) * 0.5).to(int64)] (arange, float
    arithmetic on it, a conversion, index.Tensor): each was refused. The constant positions fold at import, and
    positions i // s become the broadcast copy of the 2-d upsampling."""
    torch.manual_seed(0)
    model, x = Neck1d().eval(), torch.randn(2, 2, 5)
    compiled = loom.models.compile(model, (x,))
    producers = {layer.output.name: layer for layer in compiled.graph.layers}
    up = producers[compiled.graph.outputs[0].name]  # a view of one broadcast copy, not slices concatenated
    assert up.kind == "view" and producers[up.inputs[0].name].kind == "expand"
    got = compiled(x.numpy())
    with torch.no_grad():
        want = model(x)
    for k, (g, w) in enumerate(zip(got, want, strict=True)):
        if k == 1:  # a copy of the conv's output, whose sums may round in another order than torch's
            np.testing.assert_allclose(g, w.numpy(), rtol=1e-5, atol=1e-6)
        else:
            np.testing.assert_array_equal(g, w.numpy())


def test_a_computed_index_gathers_when_the_model_runs():
    """(It was refused: indices had to be constants.) Negative positions count from the end, as torch's."""
    class Gather(nn.Module):
        def forward(self, x, i):
            return x[:, i]

    x, i = torch.randn(2, 5), torch.tensor([0, 3, -1])
    compiled = loom.models.compile(Gather(), (x, i))
    np.testing.assert_array_equal(compiled(x.numpy(), i.numpy()), Gather()(x, i).numpy())
    with pytest.raises(LoomError, match=r"index: index 5 is out of range for an axis of 5"):
        compiled(x.numpy(), np.array([0, 5, 1]))


@pytest.mark.parametrize("scales, attrs", [([1, 1, 2], {}), ([1, 1, 3], {"coordinate_transformation_mode": "asymmetric",
                                                                          "nearest_mode": "floor"})])
def test_resize_of_a_3d_input_equals_the_reference(scales, attrs):
    from onnx.reference import ReferenceEvaluator

    model = _resize_model(attrs, scales=scales, shape=(2, 3, 5))
    x = np.random.default_rng(5).standard_normal((2, 3, 5)).astype(np.float32)
    np.testing.assert_array_equal(loom.models.compile(model)(x), ReferenceEvaluator(model).run(None, {"x": x})[0])


@pytest.mark.sanitize  # the gather's indexed loads in the generated C
def test_fractional_1d_upsampling_and_unordered_positions_are_one_gather_each():
    """Positions that are no run and no repeat (scale 1.5, x[..., [3, 0, 0, 2]]) were one slice per run of
    consecutive positions, concatenated: 202 layers and 15 s to compile 1.5x of a 400-long axis. Now one
    gather layer reads them from a constant."""
    class Fractional1d(nn.Module):
        def forward(self, x):
            return F.interpolate(x, scale_factor=1.5), F.interpolate(x, size=7), x[:, :, [3, 0, 0, 2]]

    x = torch.randn(2, 3, 400)
    compiled = loom.models.compile(Fractional1d(), (x,))
    assert sorted(layer.kind for layer in compiled.graph.layers) == ["gather"] * 3
    for g, w in zip(compiled(x.numpy()), Fractional1d()(x), strict=True):
        np.testing.assert_array_equal(g, w.numpy())
