"""The generic model's check that a flow computes its kernel (``GenericModel.check`` runs it on every
flow): the flow is played with its opcodes' ``opcode_semantics`` steps, on two tiles per tile loop,
keeping for each accumulator and each output tile which tile boxes (and, for ``mul-add``, the tile's
initial values) it holds. A description whose steps compute a box twice or never, carry one tile's
sums into the next, or add a preloaded tile back is refused at the flow's JSON path."""

from __future__ import annotations

from collections import Counter
from itertools import product

from loom.accel.description import AcceleratorDescription
from loom.accel.opcodes import Recv
from loom.accel.validate import ACCUMULATING_BODIES, place_flow
from loom.errors import LoomError


def check_flow_computes_kernel(acc: AcceleratorDescription, flow_name: str) -> None:
    """Play the flow with its opcodes' steps on two tiles per tile loop, keeping per accumulator which
    tile boxes it holds; each output tile must end up with every box of its reduction exactly once.
    An opcode's steps are what the hardware does, so a flow that computes a box twice, stores an
    accumulator it never clears or computes outside the innermost loop is a description that
    does not compute the kernel: refused here, naming the flow and the first wrong tile, rather
    than run to a wrong answer."""
    placement = place_flow(acc, flow_name)
    spec = acc.model
    assert spec is not None
    loops, outputs = placement.tile_loops, acc.kernel.output_indices
    flow = acc.flow(flow_name)
    if flow.region_operands:
        return  # not simulated by the generic model (refused when the driver runs)
    adds = acc.kernel.body in ACCUMULATING_BODIES  # the other bodies set the output box, recv replaces it
    index = dict.fromkeys(loops, 0)
    held: dict[int, Counter] = {n: Counter() for n in outputs}
    queued: list[tuple[int, Counter]] = []
    host: dict[tuple[int, tuple], Counter] = {}
    INITIAL = ("initial values",)  # a tile's values before the op: kept by accumulating bodies only

    def fail(message: str) -> LoomError:
        return LoomError(f"flow {flow_name!r} does not compute {acc.kernel.name} on the generic model: {message}; "
                         "check the opcodes' steps in opcode_semantics", where=flow.where, filename=acc.filename)

    def box() -> tuple:
        return tuple(index[d] for d in loops)

    def tile_of(n: int) -> tuple:
        used = acc.operand(n).used_dims
        return tuple((d, index[d]) for d in loops if d in used)

    def host_tile(n: int) -> Counter:
        return host.setdefault((n, tile_of(n)), Counter([INITIAL]) if adds else Counter())

    def run(opcode) -> None:
        for step in spec.steps(opcode.id):
            if step.kind == "load" and step.operand in held:  # a preload: what the host holds now
                held[step.operand] = host_tile(step.operand).copy()
            elif step.kind == "compute":
                for n in outputs:
                    held[n] = held[n] + Counter([box()]) if adds else Counter([box()])
            elif step.kind == "store":
                queued.append((step.operand, held[step.operand].copy()))
            elif step.kind == "clear":
                held[step.operand] = Counter()
        for pa in opcode.actions:
            if isinstance(pa.action, Recv):
                got = next((i for i, (n, _) in enumerate(queued) if n == pa.action.operand), None)
                if got is None:
                    raise _Stop  # nothing stored: the runtime names that receive when the driver runs
                _, boxes = queued.pop(got)
                n = pa.action.operand
                host[(n, tile_of(n))] = host_tile(n) + boxes if pa.mode == "accumulate" else boxes

    def visit(level: int) -> None:
        for p in placement.opcodes:
            if p.level == level and p.position == "before":
                run(p)
        if level == len(loops):
            for p in placement.opcodes:
                if p.level == level and p.position == "body":
                    run(p)
        else:
            for i in range(2):
                index[loops[level]] = i
                visit(level + 1)
        for p in placement.opcodes:
            if p.level == level and p.position == "after":
                run(p)

    try:
        for p in placement.init:
            run(p)
        visit(0)
    except _Stop:
        return
    for n in outputs:
        name = acc.operand(n).name
        for key in sorted({tuple((d, index_) for d, index_ in zip(loops, b) if d in acc.operand(n).used_dims)
                           for b in _boxes(loops)}):
            want = Counter(b for b in _boxes(loops) if all(dict(zip(loops, b))[d] == i for d, i in key))
            if adds:
                want[INITIAL] = 1
            got = host.get((n, key), Counter([INITIAL]) if adds else Counter())
            if got != want:
                where = ", ".join(f"{d}={i}" for d, i in key) or "the only tile"
                stray = sorted(b for b in got if b not in want)
                twice = sorted((b for b in got if got[b] > 1), key=str)
                missing = sorted((b for b in want if b not in got), key=str)
                what = (f"{_name_box(loops, stray[0])} of another tile lands in it" if stray else
                        f"{_name_box(loops, twice[0])} {'are' if twice[0] == INITIAL else 'is'} counted "
                        f"{got[twice[0]]} times" if twice else
                        f"{_name_box(loops, missing[0])} never reaches it")
                raise fail(f"{name}'s tile ({where}), with two tiles per loop ({', '.join(loops)}): {what}")


class _Stop(Exception):
    """A receive found nothing stored: the flow is left to the runtime's error."""


def _boxes(loops: tuple[str, ...]) -> list[tuple]:
    return list(product(range(2), repeat=len(loops)))


def _name_box(loops: tuple[str, ...], b: tuple) -> str:
    if b and isinstance(b[0], str):
        return "the tile's initial values"  # the INITIAL marker
    return "box (" + ", ".join(f"{d}={i}" for d, i in zip(loops, b)) + ")"
