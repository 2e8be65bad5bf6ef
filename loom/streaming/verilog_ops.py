"""A ``ubuf.kernel`` region's arith ops as SystemVerilog wires, with ``kernel_eval``'s bits.

Integers are signless bit patterns of their width; the op picks signedness (``$signed`` operands in one
expression each, a signed division through signed wires, since one unsigned operand makes a whole SystemVerilog
expression unsigned). Divisions by 0 give 0 and shifts past the width give numpy's results, as the value
simulator's; ``ubuf.lookup`` reads a ROM initialised from the constant table. Floats and unknown ops are refused
naming the op.
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import IndexType, IntegerType

from loom.errors import LoomError


def value_bits(t, where) -> int:
    """Bits of a value of MLIR type ``t`` (integers and index only)."""
    if isinstance(t, IntegerType):
        return t.width.data
    if isinstance(t, IndexType):
        return 64
    raise LoomError(f"values of type {t} have no RTL form here (integer kernels only)", where=where)


def address_bits(words: int) -> int:
    """Bits of an index into ``words`` entries (at least 1)."""
    return max(1, (words - 1).bit_length())


_CMP = {0: "==", 1: "!=", 2: ("s", "<"), 3: ("s", "<="), 4: ("s", ">"), 5: ("s", ">="), 6: ("u", "<"),
        7: ("u", "<="), 8: ("u", ">"), 9: ("u", ">=")}
_BINARY = {"arith.addi": "+", "arith.subi": "-", "arith.muli": "*", "arith.andi": "&", "arith.ori": "|",
           "arith.xori": "^", "arith.shli": "<<", "arith.shrui": ">>"}


class KernelOps:
    """One lane's copy of a kernel region as wires: each op one ``wire``, same bits as ``kernel_eval``."""

    def __init__(self, em: _Emitter, stage: str, env: dict):
        self.em, self.stage, self.env = em, stage, env

    def run(self, block) -> str:
        for k, op in enumerate(block.ops):
            if op.name == "ubuf.yield":
                return self.env[op.operands[0]]
            where = f"ubuf.kernel '{self.stage}', op {k} ({op.name})"
            r = op.results[0]
            w = value_bits(r.type, where)
            expr = self.expr(op, [self.env[o] for o in op.operands],
                             [value_bits(o.type, where) for o in op.operands], w, where)
            v = self.em.fresh(f"{self.stage}_v")
            self.em.lines.append(f"  wire [{w - 1}:0] {v} = {expr};")
            self.env[r] = v
        raise LoomError("the kernel region has no ubuf.yield", where=f"ubuf.kernel '{self.stage}'")

    def expr(self, op, xs, ws, w, where) -> str:
        name = op.name
        s = [f"$signed({x})" for x in xs]
        if name == "arith.constant":
            value = int(op.value.value.data) & ((1 << w) - 1)
            return f"{w}'d{value}"
        if name in _BINARY:
            return f"{w}'({xs[0]} {_BINARY[name]} {xs[1]})"
        if name == "arith.shrsi":
            return f"{w}'({s[0]} >>> {xs[1]})"
        if name in ("arith.divui", "arith.remui"):
            o = "/" if name == "arith.divui" else "%"
            return f"({xs[1]} == 0) ? {w}'d0 : {w}'({xs[0]} {o} {xs[1]})"
        if name in ("arith.floordivsi", "arith.ceildivsi", "arith.remsi"):
            # signed wires: in one expression an unsigned operand (a sized literal) would make the division unsigned
            q, r, f = (self.em.fresh(f"{self.stage}_{t}") for t in ("q", "r", "f"))
            self.em.lines.append(f"  wire signed [{w - 1}:0] {q} = {s[0]} / {s[1]};")
            self.em.lines.append(f"  wire signed [{w - 1}:0] {r} = {s[0]} % {s[1]};")
            if name == "arith.remsi":
                body = r
            else:  # the truncated quotient, one down (floor) or up (ceil) when inexact in that direction
                same = f"(({r} < 0) == ({s[1]} < 0))"
                fix = f"- (({r} != 0 && !{same}) ? 1 : 0)" if name == "arith.floordivsi" else \
                    f"+ (({r} != 0 && {same}) ? 1 : 0)"
                self.em.lines.append(f"  wire signed [{w - 1}:0] {f} = {q} {fix};")
                body = f
            return f"({xs[1]} == 0) ? {w}'d0 : {body}"
        if name == "arith.cmpi":
            kind = _CMP[op.predicate.value.data]
            if isinstance(kind, str):
                return f"{xs[0]} {kind} {xs[1]}"
            sign, o = kind
            a, b = (s[0], s[1]) if sign == "s" else (xs[0], xs[1])
            return f"{a} {o} {b}"
        if name == "arith.select":
            return f"{xs[0]} ? {xs[1]} : {xs[2]}"
        if name in ("arith.minui", "arith.maxui", "arith.minsi", "arith.maxsi"):
            a, b = (s[0], s[1]) if name.endswith("si") else (xs[0], xs[1])
            o = "<" if "min" in name else ">"
            return f"({a} {o} {b}) ? {xs[0]} : {xs[1]}"
        if name == "arith.extui":
            return f"{w}'({xs[0]})"
        if name == "arith.extsi" or (name == "arith.index_cast" and w > ws[0]):
            return f"{{{{{w - ws[0]}{{{xs[0]}[{ws[0] - 1}]}}}}, {xs[0]}}}" if w > ws[0] else xs[0]
        if name in ("arith.trunci", "arith.index_cast"):
            return f"{xs[0]}[{w - 1}:0]"
        if name == "arith.bitcast" and ws[0] == w:
            return xs[0]
        if name == "math.absi":
            return f"{xs[0]}[{w - 1}] ? {w}'(-{xs[0]}) : {xs[0]}"
        if name == "ubuf.lookup":
            return self.lookup(op, xs, ws, w, where)
        raise LoomError(f"'{name}' has no RTL form here (integer kernels only)", where=where)

    def lookup(self, op, xs, ws, w, where) -> str:
        table = op.table.root_reference.data
        if table not in self.em.ir.tables:
            raise LoomError(f"ubuf.lookup reads @{table}, which has no contents", where=where)
        mins, array = self.em.ir.tables[table]
        shape = array.shape[::-1]
        flat = np.asarray(array).reshape(-1)
        rom = f"rom_{table}"
        if not any(line.startswith(f"  logic [{w - 1}:0] {rom} ") for line in self.em.lines):
            mask = (1 << w) - 1
            self.em.lines.append(f"  logic [{w - 1}:0] {rom} [0:{flat.size - 1}];")
            self.em.lines.append("  initial begin " + " ".join(
                f"{rom}[{i}] = {w}'d{int(v) & mask};" for i, v in enumerate(flat.astype(np.int64))) + " end")
        # flat index: last dim slowest (storage order), each index signed, shifted by the table's min
        terms, stride, inside = [], 1, []
        for k, (x, wk, m, e) in enumerate(zip(xs, ws, mins, shape)):
            ix = f"(64'($signed({x})) - 64'sd{m})"
            terms.append(f"{ix} * {stride}")
            inside.append(f"{ix} >= 0 && {ix} < {e}")
            stride *= e
        bits = address_bits(flat.size)
        ix = self.em.fresh(f"{rom}_ix")
        self.em.lines.append(f"  wire [{bits - 1}:0] {ix} = {bits}'(" + " + ".join(terms) + ");")
        return f"({' && '.join(inside)}) ? {rom}[{ix}] : {w}'d0"


__all__ = ["KernelOps", "address_bits", "value_bits"]
