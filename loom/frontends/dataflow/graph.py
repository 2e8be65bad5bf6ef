"""``Graph``: nodes and channels declared in Python, lowered to one dfg module.

Every node becomes a body-less ``dfg.operator`` (its implementation stays a Python
object in ``Graph.bindings``, bound by name when the graph runs) and one
``dfg.instantiate`` in the entry function ``@<graph name>``; every channel one
``dfg.channel``. ``output(channel, name)`` adds a sink node ``@collect_<name>`` whose
items the runner hands back. Errors (an end used twice, a channel nobody reads, a
bad element type, a clashing name) are ``LoomError``s naming the node or channel.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import MemRefType, ModuleOp, f16, f32, f64, i1, IntegerType, Signedness
from xdsl.ir import Attribute, Block, Region

from loom.dialects.dfg import ChannelOp, InstantiateOp, OperatorOp
from loom.errors import LoomError

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_NP = {np.dtype(np.float16): f16, np.dtype(np.float32): f32, np.dtype(np.float64): f64, np.dtype(np.bool_): i1}


@functools.lru_cache(maxsize=256)
def _parse_type(text: str) -> Attribute:
    """Types are immutable: parse each spelling once (a fresh loom context costs milliseconds)."""
    from loom.dialects import context
    from loom.dialects.parsing import text_parser

    return text_parser(context(), text).parse_type()


def element_type(spec: Any, shape: tuple[int, ...] | None = None, where: str = "channel") -> Attribute:
    """An element type from an xDSL type, MLIR text (``"ui32"``, ``"memref<4xf32>"``) or a numpy dtype."""
    if isinstance(spec, Attribute):
        elem = spec
    elif isinstance(spec, str) and shape is None:
        try:
            elem = _parse_type(spec)
        except Exception as e:  # noqa: BLE001 - xDSL's parse errors have several types
            raise LoomError(f"cannot read the element type {spec!r}: {str(e).splitlines()[-1]}", where=where) from None
    else:
        try:
            dt = np.dtype(spec)
        except TypeError:
            raise LoomError(f"expected an element type (xDSL type, MLIR text or numpy dtype), got {spec!r}",
                            where=where) from None
        if dt in _NP:
            elem = _NP[dt]
        elif dt.kind in "iu":
            elem = IntegerType(dt.itemsize * 8, Signedness.UNSIGNED if dt.kind == "u" else Signedness.SIGNLESS)
        else:
            raise LoomError(f"no element type for numpy dtype {dt}", where=where)
    if shape is not None:
        if isinstance(elem, MemRefType):
            raise LoomError("give either a memref type or a shape, not both", where=where)
        elem = MemRefType(elem, list(shape))
    return elem


@dataclass(eq=False)
class ChannelRef:
    name: str
    elem: Attribute
    depth: int
    reader: str | None = None
    writer: str | None = None

    def __repr__(self) -> str:
        return f"<channel %{self.name} : {self.elem} depth {self.depth}>"


@dataclass
class _Node:
    name: str
    impl: Any
    inputs: list[ChannelRef]
    outputs: list[ChannelRef]
    offloaded: bool


@dataclass
class Graph:
    name: str = "graph"
    channels: list[ChannelRef] = field(default_factory=list)
    nodes: list[_Node] = field(default_factory=list)
    outputs: dict[str, str] = field(default_factory=dict)  # sink node -> output name

    def __post_init__(self):
        if not _NAME.match(self.name):
            raise LoomError(f"graph name {self.name!r} is not an identifier", where="Graph")

    def channel(self, elem: Any = "i32", depth: int = 1, name: str | None = None,
                shape: tuple[int, ...] | None = None) -> ChannelRef:
        name = name or f"ch{len(self.channels)}"
        where = f"channel %{name}"
        if not _NAME.match(name) or any(c.name == name for c in self.channels):
            raise LoomError("channel names must be distinct identifiers", where=where)
        if isinstance(depth, bool) or not isinstance(depth, int) or depth < 1:  # True is an int to Python
            raise LoomError(f"depth must be an integer >= 1, got {depth!r}", where=where)
        ch = ChannelRef(name, element_type(elem, shape, where), depth)
        self.channels.append(ch)
        return ch

    def node(self, impl: Any, inputs=(), outputs=(), name: str | None = None, offloaded: bool = False) -> str:
        given = name
        name = name or getattr(impl, "name", None) or getattr(getattr(impl, "fn", None), "__name__", None) \
            or getattr(impl, "__name__", None) or f"node{len(self.nodes)}"
        name = re.sub(r"\W", "_", name)
        if name == self.name or any(n.name == name for n in self.nodes):  # one symbol table holds them all
            if given is not None:  # renaming a name the user chose would break run.node(name) and messages
                holder = f"graph {self.name}" if name == self.name else f"node @{name}"
                raise LoomError(f"the name {name!r} is already taken by {holder}; give each node its own name",
                                where=f"node @{name}")
            name = f"{name}_{len(self.nodes)}"
        where = f"node @{name}"
        ends = []
        for what, chans in (("inputs", inputs), ("outputs", outputs)):
            # a bare channel (outputs=ch) is the likely slip; it is not iterable and failed deep in the loop below
            if isinstance(chans, (ChannelRef, str)) or not hasattr(chans, "__iter__"):
                raise LoomError(f"{what} must be a list of channels, got {chans!r}", where=where)
            ends.append(list(chans))
        inputs, outputs = ends
        for ch, role in [*((c, "reader") for c in inputs), *((c, "writer") for c in outputs)]:
            if not isinstance(ch, ChannelRef) or ch not in self.channels:
                raise LoomError(f"{ch!r} is not a channel of graph {self.name}", where=where)
            holder = getattr(ch, role)
            if holder is not None:
                raise LoomError(f"the {'input' if role == 'reader' else 'output'} end of %{ch.name} is already "
                                f"held by @{holder}; each end has exactly one holder", where=where)
            setattr(ch, role, name)
        self.nodes.append(_Node(name, impl, list(inputs), list(outputs), offloaded))
        return name

    def output(self, channel: ChannelRef, name: str | None = None) -> str:
        """Collect every item of ``channel``; ``run`` returns them under ``name``."""
        name = name or channel.name
        if name in self.outputs.values():  # run() collects by name: two channels would merge into one list
            raise LoomError(f"output name {name!r} is already used; give each output its own name",
                            where=f"graph {self.name}")
        sink = self.node(None, inputs=[channel], name=f"collect_{name}")
        self.outputs[sink] = name
        return sink

    @property
    def bindings(self) -> dict[str, Any]:
        return {n.name: n.impl for n in self.nodes if n.impl is not None}

    def module(self, verify: bool = True) -> ModuleOp:
        """The dfg module. The builder already enforces what the verifiers check (one holder per
        end, matching types), so runs may skip ``verify`` (tests verify what the builder makes)."""
        for ch in self.channels:
            for role in ("reader", "writer"):
                if getattr(ch, role) is None:
                    raise LoomError(f"nobody {'reads' if role == 'reader' else 'writes'} channel %{ch.name}",
                                    where=f"graph {self.name}")
        ops: list = [OperatorOp(n.name, [c.elem for c in n.inputs], [c.elem for c in n.outputs])
                     for n in self.nodes]
        body = Block()
        ends = {}
        for ch in self.channels:
            op = ChannelOp(ch.elem, ch.depth)
            op.in_end.name_hint, op.out_end.name_hint = f"{ch.name}_in", f"{ch.name}_out"
            ends[ch.name] = op
            body.add_op(op)
        for n in self.nodes:
            body.add_op(InstantiateOp(n.name, [ends[c.name].in_end for c in n.inputs],
                                      [ends[c.name].out_end for c in n.outputs], n.offloaded))
        body.add_op(func.ReturnOp())
        entry = func.FuncOp(self.name, ([], []), Region(body))
        module = ModuleOp([*ops, entry])
        if verify:
            module.verify()
        return module

    def ir(self) -> str:
        return str(self.module())
