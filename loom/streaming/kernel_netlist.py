"""A compute kernel as the processing elements (PEs) that implement it.

Reads a ``ubuf.kernel`` block (``kernel_ir``) and keeps what a mapper places on PEs after the
simplifications Halide and Clockwork make before mapping (thesis §4.4, §6.4):

- constants, width changes (ext/trunc), bit casts and ``ubuf.yield`` are wires: no PE;
- an op whose operands are all constants is folded (evaluated by ``kernel_eval``), and a ``select``
  with a constant condition is the operand it picks (the guard around a division by a constant);
- identities: ``x + 0``, ``x - 0``, ``x * 1``, ``x / 1``, shifts by 0, ``x | 0``, ``x ^ 0``, the max of ``x``
  and its type's lowest value, the min of ``x`` and its highest, are ``x``;
  ``x * 0`` and ``x & 0`` are 0;
- identical ops on identical inputs are one PE (common-subexpression elimination), also across the
  copies of a stage placed side by side (``copies``: one lane's unrolled channels);
- ``ubuf.lookup`` is a read of a ROM (a memory tile), a node of the netlist but not a PE; at a constant
  address (a channel copy's weight) with the table's contents given, it folds to that entry;
- an op no result depends on (only an untaken select arm reads it) is not placed.

Every other op is one PE. ``KernelNetlist.latency(table)`` is the critical path through the nodes
under a ``PELatency`` table: the cycles from the read ports' values to the kernel's result.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import numpy as np
from xdsl.dialects.builtin import IntegerType
from xdsl.ir import Block

from loom.errors import LoomError

from .kernel_eval import KernelEvaluator, storage_dtype

WIRES = frozenset({"arith.extui", "arith.extsi", "arith.trunci", "arith.bitcast", "arith.index_cast",
                   "arith.index_castui"})
# op -> (neutral constant, operand positions it may take)
_IDENTITY = {"arith.addi": (0, (0, 1)), "arith.ori": (0, (0, 1)), "arith.xori": (0, (0, 1)),
             "arith.subi": (0, (1,)), "arith.muli": (1, (0, 1)), "arith.divui": (1, (1,)),
             "arith.divsi": (1, (1,)), "arith.floordivsi": (1, (1,)), "arith.ceildivsi": (1, (1,)),
             "arith.shli": (0, (1,)), "arith.shrui": (0, (1,)), "arith.shrsi": (0, (1,))}
_ABSORBING = {"arith.muli": 0, "arith.andi": 0}
ROM_READ = "ubuf.lookup"


@dataclass(frozen=True)
class PELatency:
    """Cycles of each netlist node: ``ops`` by op name, ``default`` for other PE ops, ``rom`` per ROM read."""

    default: int = 1
    rom: int = 1
    ops: tuple = ()  # (op name, cycles) pairs

    def cycles(self, name: str) -> int:
        if name == ROM_READ:
            return self.rom
        return dict(self.ops).get(name, self.default)


# Amber (thesis §2.3): every PE registers its output ("registers also exist in the PEs ... to allow
# applications to be pipelined"): one cycle per operator; a ROM is a memory tile read: one cycle.
# The thesis gives no per-operator figures beyond this; wires (casts, constants) take none.
AMBER = PELatency(default=1, rom=1)


@dataclass
class Node:
    op: str  # op name
    inputs: tuple  # signals: ("arg", i) | ("node", k)
    table: str = ""  # the constant table a ROM read reads


@dataclass
class KernelNetlist:
    nodes: list = field(default_factory=list)
    result: tuple = ("const", None)  # the yielded signal (of the first copy)
    outputs: tuple = ()  # every copy's yielded signal

    def live(self) -> list:
        """The nodes some copy's result depends on: an op only an untaken select arm reads (a copy's constant
        coordinate picking one branch of a channel concatenation) is placed nowhere."""
        used = [False] * len(self.nodes)
        stack = [s[1] for s in (self.outputs or (self.result,)) if s[0] == "node"]
        while stack:
            k = stack.pop()
            if not used[k]:
                used[k] = True
                stack.extend(s[1] for s in self.nodes[k].inputs if s[0] == "node")
        return [n for n, u in zip(self.nodes, used) if u]

    @property
    def pes(self) -> int:
        return sum(1 for n in self.live() if n.op != ROM_READ)

    @property
    def rom_reads(self) -> int:
        return sum(1 for n in self.live() if n.op == ROM_READ)

    def rom_tables(self) -> set:
        """The constant tables some copy still reads as a ROM (not folded to constants)."""
        return {n.table for n in self.live() if n.op == ROM_READ}

    def op_counts(self) -> dict:
        out: dict = {}
        for n in self.live():
            out[n.op] = out.get(n.op, 0) + 1
        return out

    def latency(self, table: PELatency, source=None) -> int:
        """Cycles from the block arguments (or only argument ``source``) to the result; -1 if unreachable."""
        ready: list = []
        for n in self.nodes:
            start = max((self._ready(s, ready, source) for s in n.inputs), default=0 if source is None else -1)
            ready.append(-1 if start < 0 else start + table.cycles(n.op))
        return max(self._ready(r, ready, source) for r in self.outputs or (self.result,))

    @staticmethod
    def _ready(sig, ready, source):
        if sig[0] == "node":
            return ready[sig[1]]
        if sig[0] == "arg":
            return 0 if source is None or sig[1] == source else -1
        return 0 if source is None else -1


def kernel_netlist(block: Block, copies=None, tables=None) -> KernelNetlist:
    """The PE netlist of one kernel region's block, or of its copies placed side by side.

    ``copies``: one ``(bound, own)`` pair per copy of a stage unrolled in space (one lane's channels):
    ``bound`` maps argument positions to the copy's constant (its coordinate along the unrolled dim),
    ``own`` lists the argument positions whose value differs between copies (a read indexed by that
    coordinate, an accumulator). The copies go through the one subexpression table, so what they compute
    alike is one PE for all of them; ``outputs`` holds each copy's result. ``tables`` (constant table ->
    (mins, contents)): a table read at a constant address (a copy's weight) folds to its entry."""
    ev = KernelEvaluator(tables or {}, "kernel netlist")
    consts: dict = {}  # constant signal id -> value
    seen: dict = {}
    net = KernelNetlist()

    def const(value):
        v = np.asarray(value)
        key = ("const", v.dtype.str, v.tobytes())  # equal constants are one signal, so CSE sees them equal
        consts[key] = v
        return key

    outputs = []
    for k, (bound, own) in enumerate(copies if copies is not None else [({}, ())]):
        sig: dict = {}
        for i, a in enumerate(block.args):
            if i in bound:
                sig[a] = const(np.asarray(bound[i], np.int64).astype(storage_dtype(a.type)))
            else:
                sig[a] = ("arg", i, k) if i in own else ("arg", i)
        outputs.append(_copy(block, ev, sig, consts, const, seen, net))
    net.result, net.outputs = outputs[0], tuple(outputs)
    return net


def space_copies(dims, reads, space: dict, block, accumulators=()) -> list:
    """``kernel_netlist`` copies of ``block`` (coordinates first, read ports last) for a stage's dims computed in
    space: ``space`` maps a dim's position to its coordinates. Each copy binds those coordinates to constants;
    the reads whose index uses them and the ``accumulators`` (argument positions) differ between copies."""
    first_port = len(block.args) - len(reads)
    own = set(accumulators) | {first_port + i for i, r in enumerate(reads)
                               if any(dims[k] in ix.terms for ix in r.index for k in space)}
    return [(dict(zip(space, p)), own) for p in itertools.product(*space.values())]


def _copy(block, ev, sig, consts, const, seen, net):
    """Adds one copy of ``block`` (arguments bound in ``sig``) to ``net``; returns its yielded signal."""
    for op in block.ops:
        ins = [sig[v] for v in op.operands]
        if op.name == "ubuf.yield":
            return ins[0]
        if op.name == "arith.constant":
            sig[op.results[0]] = const(ev.constant(op.value, op.results[0].type))
            continue
        if ins and all(s in consts for s in ins):
            try:
                sig[op.results[0]] = const(ev.op(op, [consts[s] for s in ins]))
                continue
            except LoomError:  # an op the evaluator does not fold stays a PE
                pass
        if op.name in WIRES:
            sig[op.results[0]] = ins[0]
            continue
        if op.name == "arith.select" and ins[0] in consts:
            sig[op.results[0]] = ins[1] if bool(np.all(consts[ins[0]])) else ins[2]
            continue
        simple = _simplify(op.name, ins, consts, op.results[0].type if op.results else None)
        if simple is not None:
            sig[op.results[0]] = simple if simple != "zero" else const(np.zeros((), np.uint64))
            continue
        key = (op.name, tuple(ins), str(op.properties), str(op.attributes))
        if key not in seen:
            seen[key] = ("node", len(net.nodes))
            table = op.table.root_reference.data if op.name == ROM_READ else ""
            net.nodes.append(Node(op.name, tuple(s for s in ins if s not in consts), table))
        for r in op.results:
            sig[r] = seen[key]
    return ("const", None)


def _extreme_neutral(name, t):
    """The neutral operand of a max / min in type ``t``: its lowest value for max, its highest for min (an
    inline ``maximum(e)`` starts from the type's lowest value)."""
    if isinstance(t, IntegerType):
        w = t.width.data
        return {"arith.maxui": 0, "arith.maxsi": 1 << (w - 1), "arith.minui": (1 << w) - 1,
                "arith.minsi": (1 << (w - 1)) - 1}.get(name)  # signed extremes as the unsigned bits kept
    return {"arith.maximumf": -np.inf, "arith.maxnumf": -np.inf, "arith.minimumf": np.inf,
            "arith.minnumf": np.inf}.get(name)


def _simplify(name, ins, consts, result_type=None):
    """The signal an identity or absorbing op reduces to, "zero", or None."""
    if len(ins) != 2:
        return None
    neutral, positions = _IDENTITY.get(name, (_extreme_neutral(name, result_type), (0, 1)))
    if neutral is not None:
        for pos in positions:
            c = ins[pos]
            if c in consts and _equals(consts[c], neutral):
                return ins[1 - pos]
    if name in _ABSORBING:
        zero = _ABSORBING[name]
        if any(s in consts and _equals(consts[s], zero) for s in ins):
            return "zero"
    return None


def _equals(value, n) -> bool:
    v = np.asarray(value)
    if v.size != 1:
        return False
    if v.dtype.kind == "f":
        return float(v.reshape(-1)[0]) == n
    return v.dtype.kind in "biu" and int(v.reshape(-1)[0]) == n


__all__ = ["AMBER", "KernelNetlist", "Node", "PELatency", "ROM_READ", "WIRES", "kernel_netlist", "space_copies"]
