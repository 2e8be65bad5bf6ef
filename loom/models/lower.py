"""Model layers as loom IR: one ``func.func`` per distinct layer, built with ``loom.linalg``'s builders.

A layer's function takes its inputs then its output as static memrefs (weights are arguments, not IR
constants, so the C stays small and one function serves every layer of the same shape). Temporaries
(padded inputs, softmax/normalisation statistics) are ``memref.alloc``'d inside and freed at the end.
Views (reshapes) have no function: the runtime shares the buffer, as ``memref.expand_shape`` would.
Each kind's emitter lives in its family's module under ``loom.models.lowering``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.builder import ImplicitBuilder
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import SSAValue

from loom.errors import LoomError
from loom.models.graph import Layer
from loom.models.lowering.contractions import emit_batch_matmul, emit_conv2d, emit_grouped_conv2d, emit_matmul
from loom.models.lowering.elementwise import (emit_binary, emit_channel_affine, emit_compare, emit_convert,
                                              emit_logical, emit_select, emit_unary)
from loom.models.lowering.indexing import (emit_arg_reduce, emit_cumsum, emit_embedding, emit_gather,
                                           emit_gather_elements, emit_scatter_elements, emit_take_positions, emit_topk)
from loom.models.lowering.ir import memref_type
from loom.models.lowering.layout import emit_concat, emit_copy_like, emit_pad
from loom.models.lowering.reductions import emit_layer_norm, emit_pool2d, emit_reduce, emit_softmax


def layer_key(layer: Layer) -> tuple:
    """Layers with equal keys share one function."""
    return (layer.kind, tuple(sorted(layer.attrs.items())),
            tuple((t.shape, str(t.dtype)) for t in layer.inputs), layer.output.shape, str(layer.output.dtype))


def build_module(layers: Sequence[Layer]) -> tuple[ModuleOp, dict[int, str]]:
    """The module of every distinct non-view layer and, per layer index, its function's name."""
    funcs: list[func.FuncOp] = []
    by_key: dict[tuple, str] = {}
    names: dict[int, str] = {}
    for index, layer in enumerate(layers):
        if layer.is_view:
            continue
        key = layer_key(layer)
        if key not in by_key:
            by_key[key] = f"{layer.kind}_{len(by_key)}"
            funcs.append(layer_function(by_key[key], layer))
        names[index] = by_key[key]
    module = ModuleOp(funcs)
    module.verify()
    return module, names


def layer_function(name: str, layer: Layer) -> func.FuncOp:
    types = [memref_type(t.shape, t.dtype) for t in (*layer.inputs, layer.output)]
    f = func.FuncOp(name, (types, []))
    with ImplicitBuilder(f.body) as args:
        try:
            EMITTERS[layer.kind](layer, list(args[:-1]), args[-1])
        except LoomError as e:
            raise LoomError(f"{layer.kind}: {e.message}", where=layer.where or None) from None
        func.ReturnOp()
    return f


EMITTERS: dict[str, Callable[[Layer, list[SSAValue], SSAValue], None]] = {
    "conv2d": emit_conv2d,
    "grouped_conv2d": emit_grouped_conv2d,
    "concat": emit_concat,
    "pad": emit_pad,
    "matmul": emit_matmul,
    "batch_matmul": emit_batch_matmul,
    "binary": emit_binary,
    "select": emit_select,
    "compare": emit_compare,
    "logical": emit_logical,
    "convert": emit_convert,
    "unary": emit_unary,
    "channel_affine": emit_channel_affine,
    "softmax": emit_softmax,
    "layer_norm": emit_layer_norm,
    "reduce": emit_reduce,
    "pool2d": emit_pool2d,
    "transpose": emit_copy_like,
    "expand": emit_copy_like,
    "slice": emit_copy_like,
    "embedding": emit_embedding,
    "gather": emit_gather, "gather_elements": emit_gather_elements, "take_positions": emit_take_positions,
    "scatter_elements": emit_scatter_elements, "topk": emit_topk,
    "cumsum": emit_cumsum,
    "arg_reduce": emit_arg_reduce,
}


__all__ = ["EMITTERS", "build_module", "layer_function", "layer_key", "memref_type"]
