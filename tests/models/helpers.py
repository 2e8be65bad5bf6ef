"""Shared by the model tests: the relative error loom reports, a torch module run both ways, and ONNX one-node
models."""

from __future__ import annotations

import numpy as np
import pytest


def relative_error(got: np.ndarray, want: np.ndarray) -> float:
    """max |got - want| / max |want| (the acceptance criterion: <= 1e-4 in f32)."""
    assert got.shape == want.shape, (got.shape, want.shape)
    return float(np.abs(got.astype(np.float64) - want).max()) / max(float(np.abs(want).max()), 1e-12)


def run_against_torch(model, *inputs) -> tuple[list, list]:
    """(loom's outputs, torch's outputs) of ``model`` on torch tensors ``inputs``, each a list (one per output)."""
    import torch

    import loom.models

    compiled = loom.models.compile(model, inputs)
    with torch.no_grad():
        want = model(*inputs)
    got = compiled(*(x.numpy() for x in inputs))
    return (list(got) if isinstance(got, (list, tuple)) else [got]), (list(want) if isinstance(want, tuple) else [want])


def one_node_model(op: str, inputs: dict, outputs: list[str], attrs: dict | None = None,
                   initializers: dict | None = None, opset: int = 17):
    """An ONNX model of one ``op`` node; ``inputs`` maps names to (shape, numpy dtype)."""
    onnx = pytest.importorskip("onnx")
    from onnx import helper, numpy_helper

    def info(name, shape, dtype):
        return helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(np.dtype(dtype)), shape)

    inits = [numpy_helper.from_array(v, k) for k, v in (initializers or {}).items()]
    node = helper.make_node(op, [*inputs, *(initializers or {})], outputs, **(attrs or {}))
    graph = helper.make_graph([node], op, [info(k, *v) for k, v in inputs.items()],
                              [helper.make_tensor_value_info(o, onnx.TensorProto.FLOAT, None) for o in outputs],
                              inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def resize_model(attrs: dict, scales=None, sizes=None, shape=(2, 3, 3, 4), roi=None, opset: int = 13):
    """An ONNX model of one Resize node named 'up' with constant ``scales`` or ``sizes`` (and ``roi``)."""
    onnx = pytest.importorskip("onnx")
    from onnx import helper, numpy_helper

    names, inits = ["x"], []
    for name, value, dtype in (("roi", roi, np.float32), ("scales", scales, np.float32), ("sizes", sizes, np.int64)):
        if value is not None:
            inits.append(numpy_helper.from_array(np.array(value, dtype), name))
        names.append(name if value is not None else "")
    while names[-1] == "":
        names.pop()
    node = helper.make_node("Resize", names, ["y"], name="up", **attrs)
    graph = helper.make_graph([node], "r", [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, list(shape))],
                              [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, None)], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
