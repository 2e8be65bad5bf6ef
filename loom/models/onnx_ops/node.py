"""One ONNX node being translated (``Node``) and what every op family shares: reading constants, attribute
choices, and the tables of dtypes an op computes in."""

from __future__ import annotations

import numpy as np

from loom.errors import LoomError
from loom.models.graph import COMPUTE_DTYPE, I64, U64, Condition, GraphBuilder, Tensor


Value = Tensor | np.ndarray | Condition  # a layer's output, a constant known at import time, a comparison


class Node:
    """One ONNX node being translated: its inputs (None for omitted optional ones), attributes, opset."""

    def __init__(self, b: GraphBuilder, proto, values: list[Value | None], attrs: dict, opset: int,
                 wide: dict | None = None):
        self.b, self.proto, self.inputs, self.attrs, self.opset = b, proto, values, attrs, opset
        self.widened: np.dtype | None = None  # a storage dtype (float16, int8...) an input was widened from
        self.biased = False  # uint64 inputs computed as int64 less 2^63 (ordered ops)
        self.wide = {} if wide is None else wide  # tensor name -> its widened tensor, shared by the nodes
        # (graph, attribute name, its inputs' values) -> a subgraph's output values (the importer's: If, Loop)
        self.run_graph = None

    @property
    def op(self) -> str:
        return self.proto.op_type

    def error(self, message: str) -> LoomError:
        return self.b.error(self.op, message)

    def tensor(self, k: int) -> Tensor:
        """Input k as a graph tensor (constants become graph constants)."""
        v = self.inputs[k] if k < len(self.inputs) else None
        if v is None:
            raise self.error(f"input {k} is required")
        if isinstance(v, np.ndarray):  # (named after the ONNX value: a refused dtype names the initializer)
            name = self.proto.input[k] if k < len(self.proto.input) else ""
            v = self.b.constant(name or f"{self.proto.name or self.op}_in{k}", v)
        t = v
        if t.dtype in COMPUTE_DTYPE and self.op not in STORAGE_OPS:  # computed wider, narrowed after the op
            if t.dtype == U64 and self.op not in UINT64_OPS and self.op not in UINT64_ORDERED_OPS:
                known = sorted(UINT64_OPS | set(UINT64_ORDERED_OPS))
                raise self.error(f"uint64 input {k} is computed in int64 (the same bits), where only "
                                 f"{', '.join(known)} and layout ops give uint64's values; values from 2^63 on would "
                                 "compute as negative numbers in the others")
            self.widened = self.widened or t.dtype
            if t.dtype == U64 and self.op in UINT64_ORDERED_OPS[:6]:
                # comparisons, max / min: int64 of the bits less 2^63 orders as the uint64 values do
                self.biased = True
                key = (t.name, "biased")
                if key not in self.wide:
                    self.wide[key] = self._unguarded(lambda: self.b.binary("add", self.b.cast(t, I64, self.op),
                                                                           -2.0 ** 63))
                return self.wide[key]
            if t.name not in self.wide:
                self.wide[t.name] = self._unguarded(lambda: self.b.cast(t, COMPUTE_DTYPE[t.dtype], self.op))
            t = self.wide[t.name]
        return t

    def _unguarded(self, build):
        """A widened tensor built for every run (not only its branch's): later nodes, maybe outside, reuse it."""
        guard, self.b.guard = self.b.guard, None
        try:
            return build()
        finally:
            self.b.guard = guard

    def narrowed(self, out):
        """An output computed in a widened input's compute dtype, rounded (float16) or wrapped (int8, uint8, int16)
        back to that input's dtype: one rounding per op, as onnx's reference (numpy) computes float16. (Positions
        are int64 whatever the input's dtype: an ArgMax of uint32 is not narrowed.)"""
        if self.widened is not None and isinstance(out, Tensor) and out.dtype == COMPUTE_DTYPE[self.widened] and \
                self.op not in KEEP_COMPUTE_DTYPE:
            if self.biased:  # (max / min of biased uint64: the bias added back, wrapping)
                out = self.b.binary("add", out, -2.0 ** 63)
            return self.b.cast(out, self.widened, self.op)
        return out

    def optional(self, k: int) -> Tensor | None:
        return self.tensor(k) if k < len(self.inputs) and self.inputs[k] is not None else None

    def const(self, k: int, what: str) -> np.ndarray | None:
        """Input k's value, which must be known at import time (shapes, axes, pads)."""
        if k >= len(self.inputs) or self.inputs[k] is None:
            return None
        v = self.inputs[k]
        if isinstance(v, Tensor):
            if self.b.is_constant(v):
                return self.b.value(v)
            model_input = any(v is t for t in self.b.inputs)
            if model_input and v.name in self.b.examples:
                # compiled for the example's value, which the runtime requires of every call (Graph.pinned)
                self.b.pinned[v.name] = self.b.examples[v.name]
                return self.b.examples[v.name].copy()
            todo = ("; give example inputs holding its value (loom.models.compile(model, [...])): loom compiles "
                    "for that value and refuses any other when the model runs" if model_input else "")
            raise self.error(f"the {what} (input {k}) must be known at import (constants, or computed from shapes "
                             f"and constants), but {self._origin(v)}; loom compiles static shapes{todo}")
        return v

    def _origin(self, v: Tensor) -> str:
        """Where a run-time value comes from: a model input, or the node whose layer computes it."""
        if any(v is t for t in self.b.inputs):
            return f"it is the model input {v.name!r}"
        where = next((layer.where for layer in reversed(self.b.layers) if layer.output is v), "")
        where = where.split(": ", 1)[-1] if where else "an earlier node"
        return f"it depends on the model's input values (computed at run time by {where})"

    def ints(self, name: str, default=None) -> list[int] | None:
        v = self.attrs.get(name, default)
        return None if v is None else [int(x) for x in v]


# ops that move or convert values without computing with them: they take float16 / int8 / uint8 / int16 as they are
STORAGE_OPS = {"Identity", "Dropout", "Reshape", "Flatten", "Transpose", "Squeeze", "Unsqueeze", "Expand", "Slice",
                "Concat", "Split", "Gather", "Cast", "Shape", "CastLike", "Size", "DepthToSpace", "SpaceToDepth",
                "Tile", "GatherElements"}


# ops whose results are not the widened inputs' dtype though computed in it: positions (int64 whatever the input's
# dtype) and the int32 products of int8 / uint8 operands
KEEP_COMPUTE_DTYPE = {"ArgMax", "ArgMin", "MatMulInteger", "ConvInteger"}

# ops whose int64 results are uint64's for the same bits (wrapping arithmetic, bit operations; BitShift RIGHT is
# the logical shift)
UINT64_OPS = {"Add", "Sub", "Mul", "Sum", "Neg", "ReduceSum", "CumSum", "Equal", "Where", "Pad", "BitShift",
              "BitwiseAnd", "BitwiseOr", "BitwiseXor", "BitwiseNot"}


# ops whose uint64 inputs compute otherwise: the first six as int64 less 2^63 (ordered as the uint64 values), Div and
# Mod as unsigned divisions
UINT64_ORDERED_OPS = ("Greater", "Less", "GreaterOrEqual", "LessOrEqual", "Max", "Min", "Div", "Mod")


def read_array(b: GraphBuilder, proto) -> np.ndarray:
    from onnx import numpy_helper

    try:
        return np.asarray(numpy_helper.to_array(proto))
    except Exception as error:
        raise LoomError(f"{b.source}: cannot read tensor {proto.name!r}: {error}") from None


def all_const(n: Node) -> bool:
    return all(v is None or isinstance(v, np.ndarray) or n.b.is_constant(v) for v in n.inputs)


def const_values(n: Node) -> list[np.ndarray | None]:
    return [None if v is None else v if isinstance(v, np.ndarray) else n.b.value(v) for v in n.inputs]


def text(value) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def choice(n: Node, name: str, default: str, known: tuple[str, ...]) -> str:
    value = text(n.attrs.get(name, default))
    if value not in known:
        raise n.error(f"{name}={value!r} is not supported (supported: {', '.join(known)})")
    return value
