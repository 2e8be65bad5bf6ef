"""``loom model run`` inputs: int32 (quantised-style) models take --input-dtype int32, a missing
--input-shape of a multi-input model is named with the forward's arguments, and a dynamic ONNX input
points at --input-shape."""

from __future__ import annotations

import numpy as np
import pytest

from loom.cli import main
from tests.models.helpers import one_node_model

TWO_INPUTS = ("import torch\n\n"
              "class Two(torch.nn.Module):\n"
              "    def forward(self, a, b):\n"
              "        return a @ b\n")
INT32 = ("import torch\n\n"
         "class Quantised(torch.nn.Module):\n"
         "    def __init__(self):\n"
         "        super().__init__()\n"
         "        w = torch.arange(-10, 11, dtype=torch.int32).reshape(3, 7)\n"
         "        self.w = torch.nn.Parameter(w, requires_grad=False)\n\n"
         "    def forward(self, x):\n"
         "        return torch.relu(x @ self.w.T - 40)\n")


def test_an_int32_model_runs_with_int32_inputs(tmp_path, capsys):
    pytest.importorskip("torch")
    (tmp_path / "q.py").write_text(INT32)
    assert main(["model", "run", str(tmp_path / "q.py"), "--input-shape", "5,7", "--input-dtype", "int32",
                 "--check"]) == 0
    out = capsys.readouterr().out
    assert "output 0: int32[5, 3]" in out and "(ok" in out


def test_a_missing_input_shape_names_the_forward_arguments(tmp_path, capsys):
    pytest.importorskip("torch")
    (tmp_path / "two.py").write_text(TWO_INPUTS)
    assert main(["model", "run", str(tmp_path / "two.py"), "--input-shape", "2,3"]) == 1
    assert ("Two.forward(a, b) takes 2 input(s), 1 example input(s) given (loom model run: one --input-shape "
            "per input)") in capsys.readouterr().err
    assert main(["model", "run", str(tmp_path / "two.py"), "--input-shape", "2,3", "--input-shape", "3,4",
                 "--check"]) == 0


def test_a_dynamic_onnx_input_points_at_input_shape(tmp_path, capsys):
    onnx = pytest.importorskip("onnx")
    model = one_node_model("Relu", {"x": (["batch", 3], np.float32)}, ["y"])
    onnx.save(model, str(tmp_path / "relu.onnx"))
    assert main(["model", "run", str(tmp_path / "relu.onnx")]) == 1
    assert "input 'x': dynamic dims ['batch', 3]: give example inputs of the shapes to compile for (loom model " \
           "run / loom build: --input-shape)" in capsys.readouterr().err
    assert main(["model", "run", str(tmp_path / "relu.onnx"), "--input-shape", "2,3", "--check"]) == 0
