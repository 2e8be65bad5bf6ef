"""The IR contract of the accelerator passes: the attributes they hand over, and IR helpers.

The passes talk to each other only through the IR: every decision a later pass
needs is a declared, verified attribute of the ``accel`` dialect
(``loom.dialects.accel``) or a property of an ``accel`` op, so every stage prints,
parses back (``loom.dialects.context()``) and continues, in this process or another:

on the matched ``linalg.generic`` (``convert-linalg-to-accel``)
    ``accel.accelerator = #accel.accelerator<"v3_16", "{json}">``
        the accelerator's whole description (host + this accelerator), decoded by
        ``accelerator_of`` / ``system_of`` (``loom.accel``'s parser and validator,
        memoized by content, never by path)
    ``accel.plan = #accel.plan<flow "As", dims [m, n, k], tiles [..], cache [..], permutation [..]>``
        flow, accelerator dim of each op loop, accelerator tiles (0: "full"),
        cache tiles (0: no cache loop), tile-loop order; read with ``plan_of``,
        which also checks it against the op and the accelerator
after ``accel-tile``
    the tile loops carry ``accel.loop = #accel.loop<tile "m">`` (accelerator tile
    loops) or ``#accel.loop<cache "m">`` (cache loops); ``#accel.loop<batch "b">`` marks a loop
    the input already has around the op (independent problems: ``accel-place-flow`` opens one DMA
    session around it, so transfers of consecutive problems share it); the generic on the tiles
    keeps both attributes and gets the unit attribute ``accel.tiled``
after ``accel-place-flow``
    ``accel.send`` / ``accel.recv`` carry their ``padded_shape`` property (the
    staging block's shape, -1: as is) and ``accel.recv`` its ``mode``; the op
    verifiers check them against the tile.

A malformed attribute is a parse/verify error at its text location; an attribute
that does not fit its op (plan of the wrong length, unknown dim names, tiles the
accelerator cannot take, loops naming unknown dims) is a ``LoomError`` naming the op.
"""

from __future__ import annotations

import json
import os
from functools import lru_cache

from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import (
    IndexType,
    IntegerAttr,
    i32,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue

from loom.accel.description import (
    AcceleratorDescription,
    SystemDescription,
    parse_description,
    read_json,
    resolve_host,
)
from loom.core.json_text import decode_json
from loom.accel.model_spec import FILE_KINDS
from loom.dialects.accel import AcceleratorAttr, LoopAttr, PlanAttr
from loom.errors import LoomError

ACCELERATOR = "accel.accelerator"
PLAN = "accel.plan"
LOOP = "accel.loop"
TILED = "accel.tiled"


# ------------------------------------------------------------------------------ the description
def read_description_file(path: str) -> tuple[SystemDescription, dict]:
    """The validated description of a file and its JSON (the only place a description file is read)."""
    from loom.accel.validate import validate_system

    raw = read_json(path)  # read once: the JSON embedded is the JSON validated
    system = parse_description(raw, filename=path, base_dir=os.path.dirname(os.path.abspath(path)))
    validate_system(system)  # errors located in the file
    return system, raw


def embed_description(raw: dict, path: str, accelerator: str) -> AcceleratorAttr:
    """``#accel.accelerator`` for one accelerator of a (validated) description file's JSON."""
    (entry,) = [a for a in raw["accelerators"] if a.get("name") == accelerator]
    entry = with_absolute_model_paths(entry, os.path.dirname(os.path.abspath(path)))
    content: dict = {"accelerators": [entry]}
    if "cpu" in raw:
        content["cpu"], _ = resolve_host(raw["cpu"], os.path.dirname(os.path.abspath(path)), filename=path)
    return AcceleratorAttr(accelerator, json.dumps(content, sort_keys=True, separators=(",", ":")))


def with_absolute_model_paths(entry: dict, base_dir: str) -> dict:
    """The entry with the file its ``"model"`` names made absolute: the IR carries no folder."""
    model = entry.get("model")
    if not isinstance(model, dict) or len(model) != 1:
        return entry
    ((kind, argument),) = model.items()
    if kind not in FILE_KINDS or not isinstance(argument, str):
        return entry
    name, sep, cls = argument.rpartition(":") if kind == "python" else (argument, "", "")
    return {**entry, "model": {kind: os.path.join(base_dir, name) + sep + cls}}


@lru_cache(maxsize=64)
def _decode(content: str, name: str) -> SystemDescription:
    """Parse and validate an embedded description; memoized by its text (an edit is a new key)."""
    from loom.accel.validate import validate_system

    where = f"#accel.accelerator<{name!r}>"
    system = parse_description(decode_json(content, filename=where), filename=where)
    validate_system(system)
    return system


def _attr(op: Operation, key: str, kind: type, what: str):
    attr = op.attributes.get(key)
    if attr is None:
        raise LoomError(f"{_describe(op)} has no {key} attribute ({what}); run the earlier accel passes first",
                        where=key)
    if not isinstance(attr, kind):
        raise LoomError(f"{_describe(op)}: {key} must be {what}, got {attr}", where=key)
    return attr


def _describe(op: Operation) -> str:
    from loom.accel.matching import describe_op

    try:
        return describe_op(op)  # type: ignore[arg-type]
    except Exception:  # not a linalg op
        return op.name


def system_of(op: Operation) -> SystemDescription:
    """The host + accelerator description an annotated op carries (``#accel.accelerator``)."""
    attr = _attr(op, ACCELERATOR, AcceleratorAttr, "an #accel.accelerator<...> attribute")
    try:
        return _decode(attr.description.data, attr.accelerator.data)
    except LoomError as err:
        raise LoomError(f"{_describe(op)}: the description in {ACCELERATOR} is invalid: {err.message}",
                        where=err.where, filename=err.filename) from None


def accelerator_of(op: Operation) -> AcceleratorDescription:
    """The accelerator an annotated op runs on, read from its ``#accel.accelerator`` attribute."""
    attr = op.attributes[ACCELERATOR]
    return system_of(op).accelerator(attr.accelerator.data)  # type: ignore[attr-defined]


def plan_of(op: Operation) -> PlanAttr:
    """The ``#accel.plan`` of an annotated op, checked against the op's loops and its accelerator."""
    plan = _attr(op, PLAN, PlanAttr, "an #accel.plan<...> attribute")
    acc = accelerator_of(op)
    where = f"{_describe(op)}: {PLAN}"
    maps = getattr(op, "indexing_maps", None)
    if maps is not None and len(plan.dim_names) != maps.data[0].data.num_dims:
        raise LoomError(f"{where} has {len(plan.dim_names)} dims but the op has {maps.data[0].data.num_dims} loops",
                        where=PLAN)
    if plan.dim_names != acc.dims:
        raise LoomError(f"{where} names dims ({', '.join(plan.dim_names)}); accelerator {acc.name} has "
                        f"({', '.join(acc.dims)})", where=PLAN)
    acc.flow(plan.flow.data)  # an unknown flow is a LoomError naming the flows
    for d, t in zip(plan.dim_names, plan.tile_sizes):
        spec = acc.tiles[d]
        why = None
        if spec.kind == "full" and t:
            why = "must be 0: the accelerator takes the full extent"
        elif spec.kind == "fixed" and t != spec.size:
            why = f"must be {spec.size} (fixed)"
        elif spec.kind == "flexible":
            why = spec.violation(t)
        if why:
            raise LoomError(f"{where}: tile {t} for dim {d!r} {why}", where=PLAN)
    return plan


def loop_of(op: Operation) -> LoopAttr | None:
    """The ``#accel.loop`` role of an ``scf.for`` (None: not an accel loop)."""
    attr = op.attributes.get(LOOP)
    if attr is None:
        return None
    if not isinstance(attr, LoopAttr):
        raise LoomError(f"{op.name}: {LOOP} must be an #accel.loop<tile|cache|batch \"dim\"> attribute, got {attr}",
                        where=LOOP)
    return attr


def ints(attr: Attribute) -> tuple[int, ...]:
    return tuple(int(v) for v in attr.get_values())  # type: ignore[attr-defined]


class Emitter:
    """Appends ops before a fixed op (or at the end of a block) and returns their results."""

    def __init__(self, block: Block, before: Operation | None = None):
        self.block, self.before = block, before

    def op(self, new: Operation) -> Operation:
        if self.before is None:
            self.block.add_op(new)
        else:
            self.block.insert_op_before(new, self.before)
        return new

    def __call__(self, new: Operation) -> SSAValue:
        return self.op(new).results[0]

    def index(self, value: int) -> SSAValue:
        return self(arith.ConstantOp(IntegerAttr(value, IndexType())))

    def i32(self, value: int) -> SSAValue:
        if value >= 2**31:
            value -= 2**32  # a 32-bit word: same bits
        return self(arith.ConstantOp(IntegerAttr(value, i32)))

    def dim(self, value: SSAValue, k: int) -> SSAValue:
        return self(memref.DimOp(value, self.index(k)))

    def add(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self(arith.AddiOp(a, b))

    def sub(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self(arith.SubiOp(a, b))

    def mul(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self(arith.MuliOp(a, b))

    def min(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self(arith.MinSIOp(a, b))


def padded_shape(op: Operation) -> list[int]:
    """The ``padded_shape`` property of a send / recv (empty when absent: every dim as is)."""
    padded = getattr(op, "padded_shape", None)
    return [] if padded is None else list(ints(padded))


def padded_words(em: Emitter, tile: SSAValue, padded: list[int]) -> SSAValue:
    """The words of ``tile`` padded to ``padded`` (one entry per dim; -1: the tile's own size), as i32."""
    total: SSAValue | None = None
    for k, p in enumerate(padded):
        size = em.index(p) if p > 0 else em.dim(tile, k)
        total = size if total is None else em.mul(total, size)
    return em(arith.IndexCastOp(total if total is not None else em.index(1), i32))


def subview(em: Emitter, source: SSAValue, offsets: list[SSAValue], sizes: list[SSAValue]) -> SSAValue:
    rank = len(offsets)
    result = memref.SubviewOp.infer_result_type(source.type, offsets, sizes, [1] * rank)  # type: ignore[arg-type]
    return em(memref.SubviewOp.get(source, offsets, sizes, [1] * rank, result))


def operand_extent_source(maps, dim: int) -> tuple[int, int] | None:
    """(operand, subscript) whose subscript is exactly loop ``dim``, to read its extent with memref.dim."""
    from loom.accel.matching import linear_form

    for n, amap in enumerate(maps):
        for r, expr in enumerate(amap.results):
            form = linear_form(expr)
            if form is not None and form[0] == {dim: 1} and form[1] == 0:
                return n, r
    return None


def static_loop_extents(operands: list[SSAValue], maps) -> list[int]:
    """The extent of every loop of a linalg op where its operand's type gives it statically, else -1."""
    out = []
    for d in range(maps[0].num_dims):
        src = operand_extent_source(maps, d)
        size = -1
        if src is not None:
            shape = getattr(operands[src[0]].type, "shape", None)
            if shape is not None and src[1] < len(shape.data):
                size = shape.data[src[1]].data
        out.append(size if size >= 0 else -1)
    return out


def loop_extents(em: Emitter, operands: list[SSAValue], maps) -> list[SSAValue]:
    """The extent of every loop of a linalg op, read from its operands' sizes."""
    extents = []
    for d in range(maps[0].num_dims):
        src = operand_extent_source(maps, d)
        if src is None:
            raise LoomError(f"cannot tell the extent of loop d{d}: no operand is indexed by d{d} alone")
        extents.append(em.dim(operands[src[0]], src[1]))
    return extents
