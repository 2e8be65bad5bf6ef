"""``loom build`` of model files: per-layer IR, C and objects listed in the index, the model checked
against onnx.reference / torch, and one-line errors for models loom cannot build."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from loom.build import build
from loom.errors import LoomError
from tests.build.test_build import _cli, assert_documented_folder

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402


def _save(path, nodes, inputs, outputs, initializers=()):
    graph = helper.make_graph(nodes, "m", inputs, outputs, list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model)
    onnx.save(model, str(path))
    return path


def small_cnn(path):
    """Conv (padded) -> Relu -> Flatten -> MatMul -> Add, random weights."""
    rng = np.random.default_rng(7)

    def init(name, shape):
        return numpy_helper.from_array(rng.normal(size=shape).astype(np.float32), name)

    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1], name="conv"),
             helper.make_node("Relu", ["c"], ["r"], name="relu"),
             helper.make_node("Flatten", ["r"], ["f"], name="flat"),
             helper.make_node("MatMul", ["f", "m"], ["mm"], name="fc"),
             helper.make_node("Add", ["mm", "bias"], ["y"], name="add")]
    return _save(path, nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 5, 5])],
                 [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3])],
                 [init("w", (4, 2, 3, 3)), init("b", (4,)), init("m", (100, 3)), init("bias", (3,))])


def _relative_error(check: str) -> float:
    return float(re.search(r"max relative error vs \S+ (\S+) \(tolerance 0.0001\)", check).group(1))


@pytest.mark.sanitize
def test_onnx_model_builds_every_layer_and_matches_onnx_reference(tmp_path):
    result = build(small_cnn(tmp_path / "cnn.onnx"), tmp_path / "out", threads=2)
    index = assert_documented_folder(result.folder, "model")
    [unit] = index["units"]
    assert unit["name"] == "cnn" and unit["kind"] == "model"
    [check] = unit["checks"]
    assert "vs onnx.reference" in check and _relative_error(check) <= 1e-4
    files = {a["path"] for a in index["artifacts"]}
    layers = sorted({p.split("/")[2] for p in files if p.startswith("cnn/ir/")})
    assert [re.sub(r"_\d+$", "", name) for name in layers] == ["binary", "conv2d", "matmul", "unary"]  # no view
    for name in layers:
        for part in ("ir/{}/01-frontend.mlir", "ir/{}/02-loops.mlir", "ir/{}/03-lowered.mlir", "c/{}.c", "lib/{}.so"):
            assert "cnn/" + part.format(name) in files
    conv = next(n for n in layers if n.startswith("conv2d"))
    frontend = (result.folder / f"cnn/ir/{conv}/01-frontend.mlir").read_text()
    assert "linalg.generic" in frontend and "memref<1x2x7x7xf32>" in frontend  # the input padded by 1
    assert "linalg." not in (result.folder / f"cnn/ir/{conv}/03-lowered.mlir").read_text()
    report = (result.folder / "cnn" / "report" / "layers.txt").read_text().splitlines()
    assert report[0].split()[:4] == ["#", "layer", "shape", "function"]
    rows = [line.split() for line in report[1:]]
    assert [r[1] for r in rows] == ["conv2d", "unary:relu", "view", "matmul", "binary:add"]
    assert [r[2] for r in rows] == ["1x4x5x5", "1x4x5x5", "1x100", "1x3", "1x3"]
    assert all(f"'{node}'" in line for node, line in zip(("conv", "relu", "flat", "fc", "add"), report[1:]))
    section = json.loads((result.folder / "variant.section").read_text())
    assert section["units"][0]["library"] is None  # per-layer objects: no single entry for load_unit to call


def test_dynamic_onnx_model_needs_and_takes_input_shapes(tmp_path):
    rng = np.random.default_rng(1)
    weight = numpy_helper.from_array(rng.normal(size=(4, 6)).astype(np.float32), "w")
    model = _save(tmp_path / "dyn.onnx",
                  [helper.make_node("MatMul", ["x", "w"], ["h"]), helper.make_node("Relu", ["h"], ["y"])],
                  [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4])],
                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 6])], [weight])
    with pytest.raises(LoomError, match="dynamic dims"):
        build(model, tmp_path / "none", target="mlir")
    index = build(model, tmp_path / "out", input_shapes=((3, 4),)).index
    assert _relative_error(index["units"][0]["checks"][0]) <= 1e-4
    text = next((tmp_path / "out" / "dyn" / "ir").glob("matmul_*/01-frontend.mlir")).read_text()
    assert "memref<3x4xf32>" in text and "memref<3x6xf32>" in text
    with pytest.raises(LoomError, match="1 input"):
        build(model, tmp_path / "two", input_shapes=((3, 4), (2, 2)))


def test_pt2_program_matches_torch(tmp_path):
    torch = pytest.importorskip("torch")

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1, self.fc2 = torch.nn.Linear(8, 16), torch.nn.Linear(16, 4)

        def forward(self, x):
            return torch.tanh(self.fc2(torch.relu(self.fc1(x))))

    torch.manual_seed(0)
    path = tmp_path / "net.pt2"
    torch.export.save(torch.export.export(Net().eval(), (torch.zeros(2, 8),)), str(path))
    index = build(path, tmp_path / "out").index
    assert_documented_folder(tmp_path / "out", "model")
    [check] = index["units"][0]["checks"]
    assert "vs torch" in check and _relative_error(check) <= 1e-4


def test_bad_models_get_one_line_errors_naming_the_problem(tmp_path):
    _save(tmp_path / "topk.onnx",
          [helper.make_node("Relu", ["x"], ["r"]), helper.make_node("Bernoulli", ["r"], ["y"], name="pick")],
          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])])
    (tmp_path / "garbage.onnx").write_bytes(b"not a protobuf at all")
    (tmp_path / "old.pt").write_bytes(b"")
    for args, message in [(["topk.onnx"], "node 1 'pick' (Bernoulli): unsupported ONNX op Bernoulli"),
                          (["topk.onnx", "--input-shape", "2,x"], "bad --input-shape '2,x'")]:
        proc = _cli("build", *args, "-o", "gen", cwd=tmp_path)
        assert proc.returncode == 1, proc.stderr
        assert message in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
        assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    for name, message in [("garbage.onnx", "cannot read ONNX model"),
                          ("old.pt", "save the model with torch.export.save (.pt2)")]:
        with pytest.raises(LoomError, match=re.escape(message)) as error:
            build(tmp_path / name, tmp_path / "out")
        assert len(str(error.value).splitlines()) == 1 and name in str(error.value)


def test_mlir_target_options_and_a_wrong_result(tmp_path):
    index = build(small_cnn(tmp_path / "cnn.onnx"), tmp_path / "ir", target="mlir").index
    assert {a["kind"] for a in index["artifacts"]} == {"mlir"} and index["units"][0]["checks"] == []
    with pytest.raises(LoomError, match="built whole: drop ':conv'"):
        build(f"{tmp_path / 'cnn.onnx'}:conv", tmp_path / "sel")
    (tmp_path / "m.pt2").write_bytes(b"")  # (--input-shape fixes a program's dynamic dims: it is loaded first)
    with pytest.raises(LoomError, match="cannot load exported program"):
        build(tmp_path / "m.pt2", tmp_path / "pt2", input_shapes=((2, 8),))
    from loom.build.folder import UnitRecord
    from loom.build.model_unit import _check

    record, want = UnitRecord("m", "model"), np.ones((2, 3), np.float32)
    _check(record, "m", [want + 1e-6], "onnx.reference", [want])  # within 1e-4 relative
    with pytest.raises(LoomError, match="differs from onnx.reference by 0.001"):
        _check(record, "m", [want + 1e-3], "onnx.reference", [want])
    assert "max relative error vs onnx.reference 0.001 (tolerance 0.0001)" in record.checks[-1]
