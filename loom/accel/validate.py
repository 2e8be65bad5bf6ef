"""Semantic checks of accelerator descriptions and the placement of opcode flows.

What a parsed description must satisfy (every failure is a ``LoomError`` with the
JSON path in ``where`` and, for opcode text, the ``column`` of the offending id or
action):

* the data type is one the runtime moves (``i32``, ``f32``);
* opcode actions name operands of the kernel (``0 .. n_operands-1``), dims that the
  operand has (``send_dim``/``send_idx``), and ``recv`` only outputs;
* every id in a flow and in ``init_opcodes`` is defined in the opcode map;
* the flow fits the tile loop nest of its permutation (see below);
* one opcode's data fits the DMA staging buffers, and each operand tile fits the
  accelerator's buffer (``buffers``), for the nominal tile sizes.

Placement. The tile loops are the kernel dims in the flow's loop order, minus dims
whose tile is ``full``; level ``L`` is the body of the first ``L`` tile loops (0 =
outside all of them, where ``init_opcodes`` run). The flow's innermost scope is the
innermost loop body (level ``n``); each enclosing scope is one loop further out.
Ids before a nested scope run ``before`` the inner loop, ids after it ``after``;
ids of the innermost scope run in its ``body``. A scope may hold at most one nested
scope (sibling scopes would need loop fission, which is not supported).

Legality at level ``L`` (inner loops = tile loops ``L..n-1``):

* ``send(N)``/``recv(N)``: operand N must not depend on an inner loop dim, unless the
  flow lists N in ``region_operands`` (the data is then the region the inner loops
  cover, e.g. the conv accelerator's output plane); ``send_idx(N, D)`` likewise for
  the dims of subscript D. ``send_literal`` and ``send_dim`` (a tile size) are
  always placeable.
* ``recv`` of an output: every reduction tile loop must be inside the scope
  (the output is complete) unless the flow has ``accumulate_on_cpu``; a ``replace``
  recv of partial results is rejected because it would drop partial sums. The
  default recv mode is ``accumulate`` (linalg semantics: ``C += A*B``).
* ``recv(N, replace)`` when the kernel accumulates into N (body ``mul-add``): the flow
  must also send N, or N's initial values would be dropped.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod
from typing import Mapping

from loom.accel.description import AcceleratorDescription, Flow, OperandSpec, SystemDescription
from loom.accel.opcodes import (
    Action,
    FlowId,
    FlowScope,
    Recv,
    Send,
    SendDim,
    SendIdx,
    SendLiteral,
    did_you_mean,
    located_error,
    print_action,
)
from loom.errors import LoomError

SUPPORTED_DATA_TYPES = ("i32", "f32")
# bodies whose scalar computation reads the output (``out + in0 * in1``): the linalg op adds to C's values
ACCUMULATING_BODIES = ("mul-add",)


# ---------------------------------------------------------------------- placements
@dataclass(frozen=True)
class PlacedAction:
    """One action with what the lowering needs: operand, resolved recv mode, data span."""

    action: Action
    operand: OperandSpec | None  # None for send_literal
    mode: str | None = None  # "accumulate" | "replace" for recv
    region_dims: tuple[str, ...] = ()  # inner tile-loop dims the moved data spans (region operands only)
    words: int | None = None  # words moved with nominal tiles (None: depends on the problem size)


@dataclass(frozen=True)
class PlacedOpcode:
    id: str
    level: int  # 0 = outside all tile loops; n = innermost tile loop body
    position: str  # "before" | "after" the inner loop of this level, or "body" at the innermost level
    order: int  # position in the flow's textual order
    actions: tuple[PlacedAction, ...]

    @property
    def words_sent(self) -> int | None:
        ws = [a.words for a in self.actions if not isinstance(a.action, Recv)]
        return None if None in ws else sum(ws)

    @property
    def words_received(self) -> int | None:
        ws = [a.words for a in self.actions if isinstance(a.action, Recv)]
        return None if None in ws else sum(ws)


@dataclass(frozen=True)
class FlowPlacement:
    """Where every opcode of one flow runs in the tile loop nest."""

    accelerator: str
    flow: str
    loop_order: tuple[str, ...]  # all kernel dims, outer first
    tile_loops: tuple[str, ...]  # loop_order without "full" dims: the loops the flow maps onto
    init: tuple[PlacedOpcode, ...]  # init_opcodes, level 0
    opcodes: tuple[PlacedOpcode, ...]  # the flow's opcodes in textual order
    accumulate_on_cpu: bool

    def at(self, level: int, position: str | None = None) -> tuple[PlacedOpcode, ...]:
        return tuple(p for p in self.opcodes if p.level == level and (position is None or p.position == position))

    def levels_of(self, opcode_id: str) -> tuple[int, ...]:
        return tuple(p.level for p in self.opcodes if p.id == opcode_id)


# ------------------------------------------------------------------------- helpers
def _map_error(acc: AcceleratorDescription, column: int, message: str) -> LoomError:
    return _text_error(acc, "opcode_map", _map_text(acc), column, message)


def _map_text(acc: AcceleratorDescription) -> str | None:
    return acc.opcode_map_text or None


def _text_error(acc: AcceleratorDescription, key: str, text: str | None, column: int, message: str,
                where: str | None = None) -> LoomError:
    where = where or acc.path(key)
    if text is not None and column > 0:
        return located_error(text, column - 1, message, where=where, filename=acc.filename)
    return LoomError(message, where=where, filename=acc.filename)


def _subscript_extent(sub, sizes: Mapping[str, int | None]) -> int | None:
    """Extent of one subscript over a tile: ``k`` -> t_k, ``oh + fh`` -> t_oh + t_fh - 1."""
    if not sub.terms:
        return 1
    total = 1
    for d, c in sub.terms.items():
        t = sizes.get(d)
        if t is None:
            return None
        total += abs(c) * (t - 1)
    return total


def tile_shape(operand: OperandSpec, sizes: Mapping[str, int | None]) -> tuple[int | None, ...]:
    """Shape of ``operand``'s tile for the given per-dim tile sizes (None = problem-dependent)."""
    return tuple(_subscript_extent(s, sizes) for s in operand.subscripts)


def _tile_words(operand: OperandSpec, sizes: Mapping[str, int | None]) -> int | None:
    shape = tile_shape(operand, sizes)
    return None if None in shape else prod(shape)


# ---------------------------------------------------------------------- the checks
def _check_opcode_map(acc: AcceleratorDescription) -> None:
    n = acc.kernel.n_operands
    for entry in acc.opcode_map.entries:
        for action in entry.actions:
            if isinstance(action, SendLiteral):
                continue
            text = print_action(action)
            if action.operand >= n:
                names = ", ".join(f"{o.index}={o.name}" for o in acc.operands)
                raise _map_error(acc, action.column,
                                 f"opcode {entry.id!r}: {text} names operand {action.operand}, but kernel "
                                 f"{acc.kernel.name!r} has {n} operands (0..{n - 1}: {names})")
            op = acc.operand(action.operand)
            if isinstance(action, (SendDim, SendIdx)) and action.dim >= op.rank:
                raise _map_error(acc, action.column,
                                 f"opcode {entry.id!r}: {text} names dim {action.dim} of operand {op.name}, "
                                 f"which has {op.rank} dims (0..{op.rank - 1})")
            if isinstance(action, Recv) and not op.is_output:
                outs = ", ".join(f"{o.index}={o.name}" for o in acc.operands if o.is_output)
                raise _map_error(acc, action.column,
                                 f"opcode {entry.id!r}: {text} receives operand {op.name}, which is an input; "
                                 f"only outputs can be received ({outs})")


def _check_ids(acc: AcceleratorDescription, scope: FlowScope, text: str | None, where: str) -> None:
    for fid in scope.ids():
        if fid.name not in acc.opcode_map:
            raise _text_error(acc, "", text, fid.column,
                              f"unknown opcode {fid.name!r}; the opcode map defines {', '.join(acc.opcode_map.ids)}"
                              f"{did_you_mean(fid.name, acc.opcode_map.ids)}", where=where)


def _check_data_type(acc: AcceleratorDescription) -> None:
    if acc.data_type not in SUPPORTED_DATA_TYPES:
        raise LoomError(f"unsupported data type {acc.data_type!r}: the DMA runtime moves 32-bit words, "
                        f"expected one of {', '.join(SUPPORTED_DATA_TYPES)}", where=acc.path("data_type"),
                        filename=acc.filename)


def _check_buffers(acc: AcceleratorDescription, sizes: Mapping[str, int | None], where: str) -> None:
    for name, capacity in acc.buffers:
        op = acc.operand(name)
        words = _tile_words(op, sizes)
        if words is not None and words > capacity:
            shape = " x ".join(str(s) for s in tile_shape(op, sizes))
            raise LoomError(f"a tile of {name} ({shape} = {words} elements) does not fit the accelerator's "
                            f"{name} buffer ({capacity} elements)", where=where, filename=acc.filename)


def check_tile_sizes(acc: AcceleratorDescription, sizes: Mapping[str, int], *, where: str | None = None) -> None:
    """Check sizes chosen for the tiled dims (e.g. by a flexible-tiling heuristic).

    Raises a LoomError when a size breaks its dim's constraint or a tile overflows an
    accelerator buffer. Dims not in ``sizes`` keep their nominal size.
    """
    where = where or acc.path("tile_sizes")
    acc.tiles.check(sizes, where=where, filename=acc.filename)
    merged = {**acc.tiles.nominal_sizes(), **sizes}
    _check_buffers(acc, merged, where)


# ----------------------------------------------------------------------- placement
def _scope_levels(flow: Flow, n_loops: int, acc: AcceleratorDescription) -> list[tuple[FlowId, int, str, int]]:
    """(id, level, position, order) for every id of the flow."""
    depth = flow.scope.depth
    if depth > max(n_loops, 1):  # no tile loops ("full" dims only): one scope, run once
        raise _text_error(acc, "", flow.text, flow.scope.column,
                          f"flow {flow.name!r} nests {depth} scopes but the loop order "
                          f"({', '.join(flow.loop_order)}) has only {n_loops} tile loops"
                          + (" (dims with \"full\" tiles have no loop)" if n_loops < len(flow.loop_order) else "")
                          + "; the outermost scope is the outermost tile loop: opcodes sent once, before every loop, "
                          "go in init_opcodes",
                          where=flow.where)
    placed: list[tuple[FlowId, int, str, int]] = []

    def walk(scope: FlowScope, level: int) -> None:
        nested = [i for i in scope.items if isinstance(i, FlowScope)]
        if len(nested) > 1:
            raise _text_error(acc, "", flow.text, nested[1].column,
                              f"flow {flow.name!r}: a scope may contain only one nested scope (one inner loop); "
                              "sibling scopes would need loop fission", where=flow.where)
        seen_inner = False
        for item in scope.items:
            if isinstance(item, FlowScope):
                seen_inner = True
                walk(item, level + 1)
            else:
                position = "body" if not nested else ("after" if seen_inner else "before")
                placed.append((item, level, position, len(placed)))

    walk(flow.scope, n_loops - depth + 1)
    return placed


def _place_opcode(acc: AcceleratorDescription, flow: Flow | None, fid: FlowId, level: int, position: str, order: int,
                  tile_loops: tuple[str, ...], text: str | None, where: str,
                  sizes: Mapping[str, int | None], earlier: tuple[PlacedOpcode, ...] = ()) -> PlacedOpcode:
    """``earlier``: the opcodes of the flow before this one in textual (= execution) order."""
    entry = acc.opcode_map[fid.name]
    inner = tile_loops[level:]
    enclosing = tile_loops[:level]
    regions = flow.region_operands if flow else ()
    accumulate_on_cpu = flow.accumulate_on_cpu if flow else False
    scope_text = (f"at level {level} (inside {', '.join(enclosing)})" if enclosing else "at level 0 (outside all tile loops)")
    order_text = f"loop order ({', '.join(tile_loops)})"
    placed: list[PlacedAction] = []
    for action in entry.actions:
        if isinstance(action, SendLiteral):
            placed.append(PlacedAction(action, None, words=1))
            continue
        op = acc.operand(action.operand)
        used = op.subscripts[action.dim].vars if isinstance(action, (SendIdx, SendDim)) else op.used_dims
        varying = tuple(d for d in inner if d in used)
        if varying and op.name not in regions:
            verb = "receives" if isinstance(action, Recv) else "sends"
            what = f"the {'index' if isinstance(action, SendIdx) else 'size'} of dim {action.dim} of {op.name}" \
                if isinstance(action, (SendIdx, SendDim)) else f"{op.name}({', '.join(str(s) for s in op.subscripts)})"
            raise _text_error(
                acc, "", text, fid.column,
                f"opcode {fid.name!r} {verb} {what} {scope_text}, but the inner loop"
                f"{'s' if len(varying) > 1 else ''} {', '.join(varying)} change{'' if len(varying) > 1 else 's'} it "
                f"({order_text}); " + (
                    f"move {fid.name!r} into a deeper scope, pick a permutation with "
                    f"{', '.join(varying)} further out, or list {op.name} in region_operands" if flow is not None else
                    "init_opcodes run once, outside all tile loops: they may send literals and the sizes of "
                    "dims with \"full\" tiles, not data, indices or sizes of tiled dims"),
                where=where)
        words = _tile_words(op, sizes) if not varying else None
        if isinstance(action, (SendIdx, SendDim)):
            placed.append(PlacedAction(action, op, words=1))
            continue
        mode = None
        if isinstance(action, Recv):
            partial = tuple(d for d in enclosing if d in acc.kernel.reduction_dims)
            if partial and not accumulate_on_cpu and _running_tile_sent(op, tile_loops, partial, earlier, placed):
                # the accelerator was given the output's running values in this iteration of the
                # reduction loops (a preload): what comes back is the running tile, which replaces it
                if action.mode != "replace":
                    raise _text_error(
                        acc, "", text, fid.column,
                        f"opcode {fid.name!r} receives {op.name} {scope_text}, inside the reduction loop"
                        f"{'s' if len(partial) > 1 else ''} {', '.join(partial)}, after the flow sent {op.name}'s "
                        f"running tile: the accelerator returns the running sum, which recv({action.operand}) would "
                        f"add to {op.name} a second time; write recv({action.operand}, replace)", where=where)
                placed.append(PlacedAction(action, op, mode="replace", region_dims=varying, words=words))
                continue
            if partial and not accumulate_on_cpu:
                raise _text_error(
                    acc, "", text, fid.column,
                    f"opcode {fid.name!r} receives {op.name} {scope_text}, inside the reduction loop"
                    f"{'s' if len(partial) > 1 else ''} {', '.join(partial)}, so the {op.name} tile is not complete "
                    f"({order_text}); move the recv out of {', '.join(partial)}, send {op.name}'s running tile "
                    f"(send({action.operand})) before it in the same iteration and recv({action.operand}, replace), "
                    "or set accumulate_on_cpu", where=where)
            # the default follows the body: mul-add adds into the output (C += A.B), the element-wise
            # bodies and copy overwrite it (C = A + B)
            reads_output = acc.kernel.body in ACCUMULATING_BODIES
            mode = action.mode or ("accumulate" if reads_output else "replace")
            if mode == "accumulate" and not reads_output:
                raise _text_error(
                    acc, "", text, fid.column,
                    f"opcode {fid.name!r}: recv({action.operand}, accumulate) adds the tile to {op.name}'s values, "
                    f"but the kernel's body {acc.kernel.body} overwrites {op.name} (it does not read it); use "
                    f"recv({action.operand}) or recv({action.operand}, replace)", where=where)
            if partial and mode == "replace":
                preloaded = _running_tile_sent(op, tile_loops, partial, earlier, placed)
                raise _text_error(
                    acc, "", text, fid.column,
                    f"opcode {fid.name!r}: recv(…, replace) inside the reduction loop {', '.join(partial)} would "
                    "overwrite the partial sums the CPU accumulates; " + (
                        f"the flow sends {op.name}'s running tile before it, so the accelerator returns the running "
                        "sum: drop accumulate_on_cpu" if preloaded else "use accumulate"), where=where)
        placed.append(PlacedAction(action, op, mode=mode, region_dims=varying, words=words))
    result = PlacedOpcode(fid.name, level, position, order, tuple(placed))
    # one opcode is one DMA transaction each way: it must fit the staging buffers
    sent, received = result.words_sent, result.words_received
    if sent is not None and sent > acc.dma.input_words:
        raise _text_error(acc, "", text, fid.column,
                          f"opcode {fid.name!r} sends {sent} words but the DMA input buffer holds "
                          f"{acc.dma.input_words} words ({acc.dma.input_size} bytes)", where=where)
    if received is not None and received > acc.dma.output_words:
        raise _text_error(acc, "", text, fid.column,
                          f"opcode {fid.name!r} receives {received} words but the DMA output buffer holds "
                          f"{acc.dma.output_words} words ({acc.dma.output_size} bytes)", where=where)
    return result


def _running_tile_sent(op: OperandSpec, tile_loops: tuple[str, ...], partial: tuple[str, ...],
                       earlier: tuple[PlacedOpcode, ...], actions: list[PlacedAction]) -> bool:
    """Whether output ``op``'s tile was sent inside the innermost of the ``partial`` reduction loops,
    before the receive being placed: an earlier opcode of the flow at that depth or deeper, or an
    earlier action of the same opcode."""
    depth = max(tile_loops.index(d) for d in partial) + 1

    def sends(pa: PlacedAction) -> bool:
        return type(pa.action) is Send and pa.operand is not None and pa.operand.index == op.index

    return any(sends(pa) for pa in actions) or any(
        p.level >= depth and any(sends(pa) for pa in p.actions) for p in earlier)


def _check_data_moved(acc: AcceleratorDescription, flow: Flow, placed: tuple[PlacedOpcode, ...]) -> None:
    """A flow that never sends an input or never receives an output cannot compute the kernel."""
    sent = {pa.operand.index for p in placed for pa in p.actions
            if pa.operand is not None and not isinstance(pa.action, (Recv, SendDim, SendIdx))}
    received = {pa.operand.index for p in placed for pa in p.actions if isinstance(pa.action, Recv)}
    for op in acc.operands:
        if not op.is_output and op.index not in sent:
            raise _text_error(acc, "", flow.text, flow.scope.column,
                              f"flow {flow.name!r} never sends input {op.name} (operand {op.index}): no opcode of the "
                              f"flow or of init_opcodes has send({op.index})", where=flow.where)
        if op.is_output and op.index not in received:
            raise _text_error(acc, "", flow.text, flow.scope.column,
                              f"flow {flow.name!r} never receives output {op.name} (operand {op.index}): no opcode of "
                              f"the flow or of init_opcodes has recv({op.index})", where=flow.where)


def _check_replace(acc: AcceleratorDescription, flow: Flow, placed: tuple[tuple[FlowId, PlacedOpcode, str | None, str], ...]) -> None:
    """``recv(N, replace)`` overwrites output N's tile with what the accelerator returns. When the kernel
    accumulates into N (``C += A.B``) that is right only if the accelerator started from N's values, so
    the flow must send N; otherwise N's initial values would be silently dropped."""
    if acc.kernel.body not in ACCUMULATING_BODIES:
        return
    sent = {pa.operand.index for _, p, _, _ in placed for pa in p.actions
            if pa.operand is not None and not isinstance(pa.action, (Recv, SendDim, SendIdx))}
    for fid, p, text, where in placed:
        for pa in p.actions:
            if isinstance(pa.action, Recv) and pa.mode == "replace" and pa.operand is not None \
                    and pa.operand.index not in sent:
                name, n = pa.operand.name, pa.operand.index
                raise _text_error(
                    acc, "", text, fid.column,
                    f"flow {flow.name!r}, opcode {fid.name!r}: recv({n}, replace) replaces {name}'s tiles, but the "
                    f"kernel accumulates into {name} (body {acc.kernel.body}) and the flow never sends {name}: "
                    f"replace discards {name}'s initial values; the op accumulates: send {name} first "
                    f"(send({n})) or use accumulate (recv({n}))", where=where)


def place_flow(acc: AcceleratorDescription, flow_name: str | None = None,
               tile_sizes: Mapping[str, int] | None = None) -> FlowPlacement:
    """Check one flow (the selected one by default) and say where each opcode runs.

    ``tile_sizes`` overrides the nominal tile sizes (e.g. flexible tiles chosen by a
    heuristic); they are checked with ``check_tile_sizes`` and used for the word counts
    and staging-buffer checks.
    """
    flow = acc.flow(flow_name)
    sizes: dict[str, int | None] = acc.tiles.nominal_sizes()
    if tile_sizes:
        check_tile_sizes(acc, tile_sizes)
        sizes.update(tile_sizes)
    _check_ids(acc, flow.scope, flow.text, flow.where)
    tile_loops = tuple(d for d in flow.loop_order if acc.tiles[d].kind != "full")
    levels = _scope_levels(flow, len(tile_loops), acc)
    placed_opcodes: list[PlacedOpcode] = []
    for fid, level, position, order in levels:
        placed_opcodes.append(_place_opcode(acc, flow, fid, level, position, order, tile_loops, flow.text, flow.where,
                                            sizes, tuple(placed_opcodes)))
    opcodes = tuple(placed_opcodes)
    init: tuple[PlacedOpcode, ...] = ()
    init_ids: tuple[FlowId, ...] = ()
    if acc.init_opcodes is not None:
        where = acc.path("init_opcodes")
        _check_ids(acc, acc.init_opcodes, acc.init_opcodes_text, where)
        init_ids = tuple(acc.init_opcodes.ids())
        init = tuple(_place_opcode(acc, None, fid, 0, "before", i, tile_loops, acc.init_opcodes_text, where, sizes)
                     for i, fid in enumerate(init_ids))
    _check_data_moved(acc, flow, (*init, *opcodes))
    _check_replace(acc, flow, (*((fid, p, acc.init_opcodes_text, acc.path("init_opcodes")) for fid, p in zip(init_ids, init)),
                               *((lv[0], p, flow.text, flow.where) for lv, p in zip(levels, opcodes))))
    return FlowPlacement(acc.name, flow.name, flow.loop_order, tile_loops, init, opcodes, flow.accumulate_on_cpu)


def validate_accelerator(acc: AcceleratorDescription) -> dict[str, FlowPlacement]:
    """All checks for one accelerator; returns the placement of every flow by name."""
    _check_data_type(acc)
    _check_opcode_map(acc)
    _check_buffers(acc, acc.tiles.nominal_sizes(), acc.path("tile_sizes"))
    return {f.name: place_flow(acc, f.name) for f in acc.flows}


def validate_system(system: SystemDescription) -> None:
    for acc in system.accelerators:
        validate_accelerator(acc)
