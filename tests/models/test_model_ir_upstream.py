"""The layer IR loom.models emits is real MLIR: upstream mlir-opt verifies it, and mlir-runner executing
a layer's function gives what loom's C gives."""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")

from loom.models.lower import build_module  # noqa: E402
from loom.models.onnx_import import import_onnx  # noqa: E402
from loom.oracle import mlir  # noqa: E402
from tests.models.test_onnx_ops import MEMORY_SENSITIVE, _cases_model  # noqa: E402


@pytest.mark.mlir
def test_layer_functions_verify_and_run_on_upstream_mlir():
    graph = import_onnx(_cases_model(sorted(MEMORY_SENSITIVE)))
    module, names = build_module(graph.layers)
    mlir.verify(module)
    from loom.backends.c import compile_module
    from loom.models.compiler import lower_for_cpu

    compiled = compile_module(lower_for_cpu(module, set()))
    rng = np.random.default_rng(5)
    checked = set()
    for index, layer in enumerate(graph.layers):
        name = names.get(index)
        if name is None or name in checked or layer.kind == "embedding":
            continue
        checked.add(name)
        args = [rng.standard_normal(t.shape).astype(np.float32) for t in layer.inputs]
        want = mlir.run(module, name, [*args, np.zeros(layer.output.shape, np.float32)]).memrefs[-1]
        got = np.empty(layer.output.shape, np.float32)
        compiled.function(name)(*args, got)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5, err_msg=f"{name} ({layer.kind})")
    assert {"conv2d", "grouped_conv2d", "pool2d", "concat", "pad", "slice"} <= {
        layer.kind for k, layer in enumerate(graph.layers) if names.get(k) in checked}
