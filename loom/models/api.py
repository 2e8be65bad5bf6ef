"""``loom.models.compile``: a torch module or an .onnx file (path or ModelProto) -> ``CompiledModel``."""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from pathlib import Path

from loom.errors import LoomError
from loom.models.graph import Graph
from loom.models.runtime import CompiledModel


def import_model(model, example_inputs: Sequence | None = None) -> Graph:
    """The graph of ``model``: a ``torch.nn.Module`` (needs ``example_inputs``), a
    ``torch.export.ExportedProgram`` (``example_inputs`` fix its dynamic dims, if any), or an ONNX model
    (a path to a ``.onnx`` file or an ``onnx.ModelProto``; the file fixes the input shapes unless
    ``example_inputs`` give them)."""
    if isinstance(model, (str, Path)) or type(model).__name__ == "ModelProto":
        from loom.models.onnx_import import import_onnx

        return import_onnx(model, example_inputs)
    if type(model).__name__ == "ExportedProgram":
        from loom.models.torch_import import graph_from_exported, specialize

        program = specialize(model, _as_tuple(example_inputs)) if example_inputs is not None else \
            model.run_decompositions()
        return graph_from_exported(program, "ExportedProgram")
    if _is_torch_module(model):
        if example_inputs is None:
            raise LoomError("a torch module needs example_inputs (one array or tensor per forward argument)")
        from loom.models.torch_import import import_torch

        return import_torch(model, _as_tuple(example_inputs))
    raise LoomError(f"cannot import a {type(model).__name__}: give a torch.nn.Module, a "
                    "torch.export.ExportedProgram, a path to an .onnx file or an onnx.ModelProto")


def compile(model, example_inputs: Sequence | None = None, accelerators=None,  # noqa: A001
            offload: str = "when-faster") -> CompiledModel:
    """Import ``model`` and compile it for the CPU; the result is called on numpy arrays. With
    ``accelerators`` (description paths), matrix products run on the first one that takes them: when
    its modelled time beats the CPU layer's measured time (``offload="when-faster"``), or always
    (``offload="always"``)."""
    from loom.models.compiler import compile_graph

    return compile_graph(import_model(model, example_inputs), accelerators, offload)


def _as_tuple(example_inputs) -> tuple:
    return tuple(example_inputs) if isinstance(example_inputs, (list, builtins.tuple)) else (example_inputs,)


def _is_torch_module(model) -> bool:
    return any(c.__module__.startswith("torch.nn") and c.__name__ == "Module" for c in type(model).__mro__)
