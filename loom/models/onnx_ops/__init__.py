"""The ONNX importer's op table: one module per op family, each with an ``OPS`` dict (op type -> a function of
a ``Node`` returning the op's outputs: graph tensors, import-time constants or comparisons). ``ONNX_OPS`` is their
union; an op type registered by two families is an error at import of this package, not a silent override."""

from __future__ import annotations

from collections.abc import Callable

from loom.models.onnx_ops import (activations, attention, constants, control_flow, convolution, elementwise,
                                  indexing, nd_indexing, normalization, products, quantization, recurrent, reductions,
                                  resizing, shape)
from loom.models.onnx_ops.node import Node

FAMILIES = (constants, elementwise, activations, products, convolution, normalization, reductions, shape, indexing,
            nd_indexing, resizing, recurrent, quantization, attention, control_flow)


def _union(families) -> dict[str, Callable[[Node], object]]:
    table: dict[str, Callable[[Node], object]] = {}
    for family in families:
        for op, build in family.OPS.items():
            if op in table:
                raise RuntimeError(f"ONNX op {op} is registered twice ({family.__name__})")
            table[op] = build
    return table


ONNX_OPS = _union(FAMILIES)

__all__ = ["ONNX_OPS", "FAMILIES", "Node"]
