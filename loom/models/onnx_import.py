"""ONNX import: an ``.onnx`` file (or ``ModelProto``) -> a ``Graph`` through the same ``GraphBuilder``.

Every node's op type is checked against ``ONNX_OPS`` (``loom.models.onnx_ops``: one module per op family) before
anything is built, so an unsupported op (or an unsupported form of a supported one: an attribute value, a dtype, a
dynamic shape) is refused at import time as ``file.onnx: node 3 'name' (OpType): ...``. Shape arithmetic on
constants (Shape, Gather, Concat, Unsqueeze, ... of initializers, Constant, ConstantOfShape) is folded with numpy,
so only tensor computations become layers. onnx is imported lazily.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from loom.errors import LoomError
from loom.models.graph import COMPUTE_DTYPE, F32, Condition, GraphBuilder, Tensor
from loom.models.onnx_ops import ONNX_OPS
from loom.models.onnx_ops.node import Node, Value, read_array


def import_onnx(model, example_inputs: Sequence | None = None):
    import onnx

    source = "<onnx model>"
    if isinstance(model, (str, Path)):
        source = str(model)
        try:
            model = onnx.load(str(model))
        except Exception as error:  # protobuf's DecodeError, OSError, ...
            raise LoomError(f"cannot read ONNX model {source}: {type(error).__name__}: {error}",
                            filename=source) from None
    graph = model.graph
    opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 1)
    _check_ops(graph, source, "")  # refuse unsupported ops before building anything
    b = GraphBuilder(source)
    values: dict[str, Value] = {}
    wide: dict[str, Tensor] = {}
    for init in graph.initializer:
        values[init.name] = read_array(b, init)
    examples = list(example_inputs) if example_inputs is not None else None
    real_inputs = [i for i in graph.input if i.name not in values]
    if examples is not None and len(examples) != len(real_inputs):
        raise LoomError(f"{source}: the model has {len(real_inputs)} input(s), {len(examples)} example(s) given")
    for k, inp in enumerate(real_inputs):
        b.at(f"{source}: input {inp.name!r}")
        try:
            shape, dtype = _input_type(b, inp, examples[k] if examples else None)
        except (KeyError, ValueError, TypeError) as error:  # e.g. an element type code onnx does not know
            raise b.error("input", f"malformed input type ({type(error).__name__}: {error})") from None
        values[inp.name] = b.input(inp.name, shape, dtype)
        if examples is not None:  # (a shape-like input takes its example's value: Node.const)
            b.examples[values[inp.name].name] = np.array(examples[k])
    _run_nodes(b, graph, values, _Scope(source, opset, wide))
    outputs = []
    for out in graph.output:
        b.at(f"{source}: output {out.name!r}")
        v = values.get(out.name)
        if v is None:
            raise b.error("output", f"{out.name!r} is not produced by any node")
        if isinstance(v, Condition):
            v = b.as_bool(v)
        outputs.append(b.constant(out.name, v) if isinstance(v, np.ndarray) else v)
    return b.finish(outputs)


class _Scope:
    """What every node of the model shares: the source's name, the opset, the widened tensors; ``within`` names the
    enclosing node of a subgraph's nodes (an If's branch)."""

    def __init__(self, source: str, opset: int, wide: dict, within: str = ""):
        self.source, self.opset, self.wide, self.within = source, opset, wide, within

    def inner(self, where: str) -> _Scope:
        return _Scope(self.source, self.opset, self.wide, f"{self.within}{where} > ")


def _check_ops(graph, source: str, within: str) -> None:
    """Refuse an unsupported op (in the graph or any subgraph) naming the node, before anything is built."""
    import onnx

    for k, node in enumerate(graph.node):
        if node.domain not in ("", "ai.onnx") or node.op_type not in ONNX_OPS:
            why = _DATA_DEPENDENT.get(node.op_type, "") if node.domain in ("", "ai.onnx") else ""
            raise LoomError(f"unsupported ONNX op {node.op_type}{' of domain ' + node.domain if node.domain else ''}"
                            f"{why} (loom imports: {', '.join(sorted(ONNX_OPS))})",
                            filename=source, where=f"{within}node {k} {node.name!r} ({node.op_type})")
        for a in node.attribute:
            if a.type == onnx.AttributeProto.GRAPH:
                _check_ops(a.g, source, f"{within}node {k} {node.name!r} ({node.op_type}) {a.name} > ")


def _run_nodes(b: GraphBuilder, graph, values: dict[str, Value], scope: _Scope) -> None:
    """Translate ``graph``'s nodes in order, adding their outputs to ``values`` (names -> values; a subgraph's
    ``values`` start as its enclosing scope's)."""
    import onnx

    for k, node in enumerate(graph.node):
        place = f"{scope.within}node {k} {node.name!r} ({node.op_type})"
        b.at(f"{scope.source}: {place}")
        missing = [n for n in node.input if n and n not in values]
        if missing:
            raise b.error(node.op_type, f"input {missing[0]!r} is not defined before this node")
        ins = [_as_input(b, node.op_type, k, values[n]) if n else None for k, n in enumerate(node.input)]
        node_ = None
        try:
            attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
            node_ = Node(b, node, ins, attrs, scope.opset, scope.wide)
            node_.run_graph = lambda g, name, bound=(), values=values, place=place: _run_subgraph(
                b, g, values, list(bound), scope.inner(f"{place} {name}"))
            outs = ONNX_OPS[node.op_type](node_)
        except LoomError as error:
            if node_ is None or node_.widened is None:
                raise
            # name the model's dtype, not the widened tensor the op refused
            raise LoomError(f"{error.message} (this node's {node_.widened} inputs compute in "
                            f"{COMPUTE_DTYPE[node_.widened]})", filename=error.filename, where=error.where) from None
        except (KeyError, IndexError, TypeError, ValueError, AttributeError, ZeroDivisionError) as error:
            # a node whose attributes or inputs do not have the form the op's specification gives
            b.at(f"{scope.source}: {place}")
            raise b.error(node.op_type, f"malformed node ({type(error).__name__}: {error})") from None
        b.at(f"{scope.source}: {place}")  # (a subgraph's nodes moved it)
        outs = outs if isinstance(outs, tuple) else (outs,)
        outs = tuple(node_.narrowed(o) for o in outs)
        # numpy's ops of 0-d arrays give scalars (np.take of Shape's dim, np.add): constants stay arrays
        outs = tuple(np.asarray(o) if isinstance(o, np.generic) else o for o in outs)
        for k_out, name in enumerate(node.output):
            if not name:
                continue
            if k_out >= len(outs) or outs[k_out] is None:
                used = any(name in n.input for n in graph.node) or any(o.name == name for o in graph.output)
                if used:
                    raise b.error(node.op_type, f"output {k_out} ({name!r}) is not computed by loom")
                continue
            values[name] = outs[k_out]


def _run_subgraph(b: GraphBuilder, graph, outer: dict[str, Value], bound: list[Value], scope: _Scope
                  ) -> list[Value]:
    """A subgraph's outputs (an If's branch, a Loop's body): its nodes see the enclosing values (ONNX's scoping),
    its own initializers and its inputs, given in order in ``bound``."""
    if len(graph.input) != len(bound):
        raise b.error("subgraph", f"the subgraph has {len(graph.input)} inputs, its node gives {len(bound)}")
    where = b.where  # (the enclosing node's place, for its own errors after the subgraph)
    values = dict(outer)
    values.update({i.name: v for i, v in zip(graph.input, bound)})
    for init in graph.initializer:
        values[init.name] = read_array(b, init)
    _run_nodes(b, graph, values, scope)
    missing = [o.name for o in graph.output if o.name not in values]
    if missing:
        raise b.error("subgraph", f"output {missing[0]!r} is not produced by any node")
    b.at(where)
    return [values[o.name] for o in graph.output]


# ops whose output shape depends on the values (x[mask] exports as NonZero + GatherND, or Compress): refused, saying
# why, since a loom model's shapes are static
_DATA_DEPENDENT = {op: f": its output shape depends on the input's values ({what}), and a loom model's shapes are "
                       "static; keep the shape with Where(mask, x, 0) or reduce the masked values"
                   for op, what in (("NonZero", "one index per non-zero element"),
                                    ("Compress", "one slice per true condition element"),
                                    ("Unique", "one element per distinct value"))}


# inputs that take a comparison as it is (computed inside the op's own loop); any other builds its bool tensor
_TAKE_CONDITIONS = {("Where", 0), ("Cast", 0)}


def _as_input(b: GraphBuilder, op: str, k: int, v: Value) -> Value:
    return b.as_bool(v) if isinstance(v, Condition) and (op, k) not in _TAKE_CONDITIONS else v


def _input_type(b: GraphBuilder, inp, example) -> tuple[tuple[int, ...], np.dtype]:
    """The input's shape (its own, or the example's where it has symbolic dims) and dtype; errors are placed at the
    input (``b.where`` names it) and show symbolic dims by their names."""
    from onnx import helper

    t = inp.type.tensor_type
    if not inp.type.HasField("tensor_type"):
        raise LoomError("not a tensor (sequence and map inputs are not supported)", where=b.where)
    dtype = np.dtype(helper.tensor_dtype_to_np_dtype(t.elem_type))
    dims = [d.dim_value if d.HasField("dim_value") else None for d in t.shape.dim]
    shown = [d.dim_value if d.HasField("dim_value") else d.dim_param or "?" for d in t.shape.dim]
    if example is not None:
        example = np.asarray(example)
        if example.dtype != dtype or len(example.shape) != len(dims) or any(
                d is not None and d != e for d, e in zip(dims, example.shape)):
            raise LoomError(f"the model's input is {dtype}{shown} but the example is {example.dtype}"
                            f"{list(example.shape)}", where=b.where)
        return tuple(example.shape), dtype
    if any(d is None for d in dims):
        raise LoomError(f"dynamic dims {shown}: give example inputs of the shapes to compile for (loom model run / "
                        "loom build: --input-shape)", where=b.where)
    return tuple(dims), dtype


__all__ = ["import_onnx", "ONNX_OPS", "F32"]
