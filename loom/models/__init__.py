"""Whole models: PyTorch (``torch.export``) and ONNX import into loom IR, compiled for the CPU.

    model = loom.models.compile(torch_module_or_onnx_path, example_inputs)
    y = model(*numpy_arrays)          # inputs checked (dtype, shape) before C runs

Importers (``torch_import``, ``onnx_import``) translate ops into a ``graph.Graph`` through one
``GraphBuilder`` (shape rules, refusals with the op's place); ``lower`` turns each distinct layer into a
``func.func`` built with ``loom.linalg``; ``compile`` lowers and compiles them into one shared object;
``runtime.CompiledModel`` runs the layers in order. torch and onnx are optional (``loom[models]``).
"""

from loom.models.api import compile, import_model
from loom.models.graph import Graph, GraphBuilder, Layer, Tensor
from loom.models.runtime import CompiledModel

__all__ = ["compile", "import_model", "CompiledModel", "Graph", "GraphBuilder", "Layer", "Tensor"]
