"""The generic model (``"model": "generic"``): the described kernel, computed with numpy on loaded tiles.

The accelerator is read off its description: each opcode's words arrive as its actions say
(``send_literal`` words identify the opcode and are checked, ``send_dim`` / ``send_idx`` words
are read and ignored, ``send(N)`` brings the tile of operand N), then the opcode's steps from
``"opcode_semantics"`` run in order:

* ``load N``   — the tile of operand N that this opcode sent is now the operand's tile (of an
  output: its accumulator starts from the tile sent, a preload of the running sum or a bias);
* ``compute``  — the kernel (indexing maps + body) over one tile box, added into the outputs'
  accumulators;
* ``store N``  — output N's accumulator is queued for the host's next receive;
* ``clear N``  — output N's accumulator becomes zero.

Tiles are the accelerator's fixed tile sizes (partial tiles arrive zero-padded); a subscript
``oh + fh`` spans ``Toh + Tfh - 1`` elements. Opcodes are told apart by their first
``send_literal``; an accelerator with one opcode may have none. Supported: fixed tile sizes,
non-negative linear subscripts, ``mul-add``, ``copy`` and element-wise ``add``/``mul``/``max``/``min``
bodies, i32 and f32.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod

import numpy as np

from loom.accel.description import AcceleratorDescription
from loom.accel.opcodes import Recv, Send, SendDim, SendIdx, SendLiteral
from loom.errors import LoomError
from loom.runtime.generic_flow_check import check_flow_computes_kernel

BODIES = ("mul-add", "copy", "add", "mul", "max", "min", "relu")
_ELEMENTWISE = {"add": np.add, "mul": np.multiply, "max": np.maximum, "min": np.minimum}


@dataclass(frozen=True)
class _Opcode:
    id: str
    actions: tuple
    steps: tuple  # the non-load steps, in order: (kind, operand)


class GenericModel:
    """A Python model (``loom.runtime.python_model``) built from the description alone."""

    @staticmethod
    def check(acc: AcceleratorDescription) -> None:
        """Reject what the generic model cannot simulate, naming the description's place."""
        def fail(message: str, where: str = "model") -> LoomError:
            return LoomError(f"the generic model of {acc.name}: {message}", where=acc.path(where), filename=acc.filename)

        for tile in acc.tiles.tiles:
            if tile.kind != "fixed":
                raise fail(f"dim {tile.dim!r} has a {tile.kind} tile size; the generic model needs fixed tile sizes",
                           f"tile_sizes.{tile.dim}")
        if acc.kernel.body not in BODIES:
            raise fail(f"body {acc.kernel.body!r}; the generic model computes {' and '.join(BODIES)}", "kernel")
        if acc.data_type not in ("i32", "f32"):
            raise fail(f"data type {acc.data_type}; the generic model takes i32 and f32", "data_type")
        for op in acc.operands:
            for sub in op.subscripts:
                if any(c < 0 for c in sub.terms.values()):
                    raise fail(f"operand {op.name} subscript {sub} has a negative coefficient", "kernel")
        firsts: dict[int, str] = {}
        sending = [e for e in acc.opcode_map.entries if any(not isinstance(a, Recv) for a in e.actions)]
        for entry in sending:
            first = entry.actions[0]
            if not isinstance(first, SendLiteral):
                if len(sending) > 1:
                    raise fail(f"opcode {entry.id!r} does not start with a send_literal, so the generic model cannot "
                               "tell it from the other opcodes", "opcode_map")
                continue
            word = first.value & 0xFFFFFFFF  # -1 and 0xFFFFFFFF are the same word
            if word in firsts:
                raise fail(f"opcodes {firsts[word]!r} and {entry.id!r} both start with literal {first.value}; "
                           "the generic model tells opcodes apart by their first word", "opcode_map")
            firsts[word] = entry.id
        for flow in acc.flows:
            check_flow_computes_kernel(acc, flow.name)

    def __init__(self, acc: AcceleratorDescription):
        self.acc = acc
        spec = acc.model
        assert spec is not None and spec.kind == "generic"
        self.dtype = np.int32 if acc.data_type == "i32" else np.float32
        self.tile = {t.dim: t.size for t in acc.tiles.tiles}
        dims = acc.kernel.dims
        self.box = tuple(self.tile[d] for d in dims)
        grid = np.indices(self.box)
        self.shapes, self.index = [], []
        for op in acc.operands:
            shape, index = [], []
            for sub in op.subscripts:
                terms = _terms(sub, dims)
                shape.append(1 + sum(c * (self.tile[d] - 1) for d, c in terms.items()))
                index.append(sum(c * grid[dims.index(d)] for d, c in terms.items()) if terms
                             else np.zeros(self.box, np.intp))
            self.shapes.append(tuple(shape))
            self.index.append(tuple(index))
        self.outputs = acc.kernel.output_indices
        self.inputs = tuple(range(acc.kernel.n_inputs))
        self.opcodes: dict[int | None, _Opcode] = {}
        for entry in acc.opcode_map.entries:
            if not any(not isinstance(a, Recv) for a in entry.actions):
                continue
            steps = tuple((s.kind, s.operand) for s in spec.steps(entry.id) if s.kind != "load")
            first = entry.actions[0]
            key = first.value & 0xFFFFFFFF if isinstance(first, SendLiteral) else None  # the word, as words arrive
            self.opcodes[key] = _Opcode(entry.id, entry.actions, steps)
        self.tiles: dict[int, np.ndarray] = {}
        self.accumulators = {n: np.zeros(self.shapes[n], self.dtype) for n in self.outputs}
        self.macs = 0
        # parser state: the opcode being read, the action index, a partial tile
        self.current: _Opcode | None = None
        self.action = 0
        self.partial: list[np.ndarray] = []
        self.partial_words = 0
        self.sent: dict[int, np.ndarray] = {}
        self.out: list[np.ndarray] = []

    # -- the word stream -----------------------------------------------------------------
    def consume(self, words: np.ndarray):
        i, n = 0, len(words)
        while i < n:
            if self.current is None:
                key = int(words[i]) if None not in self.opcodes else None
                op = self.opcodes.get(key)
                if op is None:
                    known = ", ".join(f"{v} ({o.id})" for v, o in self.opcodes.items())
                    raise ValueError(f"word {i} = {int(words[i])} is no opcode of {self.acc.name} (opcodes: {known})")
                self.current, self.action, self.sent = op, 0, {}
                if key is not None:
                    self.action = 1  # the literal just read
                    i += 1
            i = self._read_actions(words, i)
            if self.current is not None and self.action == len(self.current.actions):
                self._run(self.current)
                self.current = None
        out, self.out = self.out, []
        return np.concatenate(out) if out else None

    def _read_actions(self, words: np.ndarray, i: int) -> int:
        op = self.current
        assert op is not None
        n = len(words)
        while self.action < len(op.actions):
            action = op.actions[self.action]
            if isinstance(action, Recv):  # needs nothing from the stream
                self.action += 1
                continue
            if i == n:
                break
            if isinstance(action, SendLiteral):
                if int(words[i]) != action.value & 0xFFFFFFFF:
                    raise ValueError(f"opcode {op.id}: word {i} = {int(words[i])}, expected literal {action.value}")
                i += 1
            elif isinstance(action, (SendDim, SendIdx)):
                i += 1
            elif isinstance(action, Send):
                need = prod(self.shapes[action.operand]) - self.partial_words
                take = min(need, n - i)
                self.partial.append(words[i:i + take])
                self.partial_words += take
                i += take
                if take < need:
                    return i  # the tile continues in the next send
                flat = np.concatenate(self.partial) if len(self.partial) > 1 else self.partial[0]
                self.sent[action.operand] = flat.view(self.dtype).reshape(self.shapes[action.operand]).copy()
                self.partial, self.partial_words = [], 0
            self.action += 1
        return i

    def _run(self, op: _Opcode) -> None:
        for n, tile in self.sent.items():  # the 'load N' steps
            if n in self.accumulators:
                self.accumulators[n][...] = tile
            else:
                self.tiles[n] = tile
        for kind, operand in op.steps:
            if kind == "compute":
                self._compute(op)
            elif kind == "store":
                self.out.append(self.accumulators[operand].reshape(-1).view(np.uint32).copy())
            else:  # clear
                self.accumulators[operand][...] = 0

    def _compute(self, op: _Opcode) -> None:
        missing = [self.acc.operands[n].name for n in self.inputs if n not in self.tiles]
        if missing:
            raise ValueError(f"opcode {op.id}: compute before operand {', '.join(missing)} was loaded")
        values = [self.tiles[n][self.index[n]] for n in self.inputs]
        if self.acc.kernel.body in ("copy", "relu"):
            result = values[0] if self.acc.kernel.body == "copy" else np.maximum(values[0], 0).astype(self.dtype)
            for n in self.outputs:
                self.accumulators[n][self.index[n]] = result
            return
        if self.acc.kernel.body in _ELEMENTWISE:  # out = in0 OP in1: the output is set, not added to
            wide = [v.astype(np.int64) for v in values] if self.dtype == np.int32 else values
            result = _ELEMENTWISE[self.acc.kernel.body](*wide).astype(self.dtype)  # int32 wrap-around
            for n in self.outputs:
                self.accumulators[n][self.index[n]] = result
            self.macs += prod(self.box)
            return
        if self.dtype == np.int32:
            product = values[0].astype(np.int64)
            for v in values[1:]:
                product = product * v
        else:
            product = values[0]
            for v in values[1:]:
                product = product * v
        for n in self.outputs:
            total = np.zeros(self.shapes[n], product.dtype)
            np.add.at(total, self.index[n], product)
            acc = self.accumulators[n]
            if self.dtype == np.int32:
                acc[...] = (acc.astype(np.int64) + total).astype(np.int32)  # int32 wrap-around, like hardware
            else:
                acc += total
        self.macs += prod(self.box)

    def idle(self):
        if self.current is not None and self.action < len(self.current.actions):
            return f"opcode {self.current.id} still expects the rest of its words (action {self.action + 1} " \
                   f"of {len(self.current.actions)})"
        return None


def _terms(sub, dims) -> dict[str, int]:
    """The linear terms of a subscript (``oh + fh`` -> {oh: 1, fh: 1}); constants are tile-local zero."""
    return dict(sub.terms)
