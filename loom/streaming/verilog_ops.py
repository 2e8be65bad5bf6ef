"""A ``ubuf.kernel`` region's arith ops as SystemVerilog wires, with ``kernel_eval``'s bits.

Integers are signless bit patterns of their width; the op picks signedness (``$signed`` operands in one
expression each, a signed division through signed wires, since one unsigned operand makes a whole SystemVerilog
expression unsigned). Divisions by 0 give 0 and shifts past the width give numpy's results, as the value
simulator's; ``ubuf.lookup`` reads a ROM initialised from the constant table. f32 values are their IEEE
bit patterns, computed by ``verilog_float``'s functions (correctly rounded, as the CPU and the value simulator
compute them); other float types and unknown ops are refused naming the op.
"""

from __future__ import annotations

import itertools

import numpy as np
from xdsl.dialects.builtin import Float32Type, IndexType, IntegerType

from loom.errors import LoomError


_FLOATS = (Float32Type,)  # the fabric's values have at most 32 bits: f64 is refused before the RTL


def value_bits(t, where) -> int:
    """Bits of a value of MLIR type ``t`` (integers, index and f32)."""
    if isinstance(t, IntegerType):
        return t.width.data
    if isinstance(t, IndexType):
        return 64
    if isinstance(t, _FLOATS):
        return t.bitwidth
    raise LoomError(f"values of type {t} have no RTL form here (integers and f32 only)", where=where)


def address_bits(words: int) -> int:
    """Bits of an index into ``words`` entries (at least 1)."""
    return max(1, (words - 1).bit_length())


_FLOAT_BINARY = {"arith.addf": "add", "arith.subf": "sub", "arith.mulf": "mul", "arith.divf": "div",
                 "arith.maximumf": "max", "arith.minimumf": "min"}
_FLOAT_UNARY = {"math.sqrt": "sqrt"}
_INTEGRAL = {"math.floor": 0, "math.ceil": 1, "math.trunc": 2, "math.roundeven": 3}
_CMP = {0: "==", 1: "!=", 2: ("s", "<"), 3: ("s", "<="), 4: ("s", ">"), 5: ("s", ">="), 6: ("u", "<"),
        7: ("u", "<="), 8: ("u", ">"), 9: ("u", ">=")}
_BINARY = {"arith.addi": "+", "arith.subi": "-", "arith.muli": "*", "arith.andi": "&", "arith.ori": "|",
           "arith.xori": "^", "arith.shli": "<<", "arith.shrui": ">>"}


class KernelOps:
    """One lane's copy of a kernel region as wires: each op one ``wire``, same bits as ``kernel_eval``."""

    def __init__(self, em: _Emitter, stage: str, env: dict):
        self.em, self.stage, self.env = em, stage, env
        self.consts: dict = {}  # wire -> its compile-time value (numpy, ``kernel_eval``'s storage)

    def run(self, block) -> str:
        for k, op in enumerate(block.ops):
            if op.name == "ubuf.yield":
                return self.env[op.operands[0]]
            where = f"ubuf.kernel '{self.stage}', op {k} ({op.name})"
            r = op.results[0]
            w = value_bits(r.type, where)
            xs = [self.env[o] for o in op.operands]
            value = self.fold(op, xs)
            if value is not None:  # a constant (a weight read at a constant address): a literal the tools fold
                v = self.em.fresh(f"{self.stage}_v")
                self.em.lines.append(f"  wire [{w - 1}:0] {v} = {w}'h{_bits(value, w):x};")
                self.env[r], self.consts[v] = v, value
                continue
            expr = self.expr(op, xs, [value_bits(o.type, where) for o in op.operands], w, where)
            v = self.em.fresh(f"{self.stage}_v")
            self.em.lines.append(f"  wire [{w - 1}:0] {v} = {expr};")
            self.env[r] = v
        raise LoomError("the kernel region has no ubuf.yield", where=f"ubuf.kernel '{self.stage}'")

    def expr(self, op, xs, ws, w, where) -> str:
        name = op.name
        s = [f"$signed({x})" for x in xs]
        if name == "arith.constant":  # folded in ``run``; here when the evaluator refused it
            return f"{w}'h{_bits(self.em.evaluator().constant(op.value, op.results[0].type), w):x}"
        if any(isinstance(v.type, _FLOATS) for v in (*op.operands, *op.results)):
            return self.float_expr(op, xs, ws, w, where)
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
        raise LoomError(f"'{name}' has no RTL form here", where=where)

    def float_expr(self, op, xs, ws, w, where) -> str:
        """An op with a float operand or result: a call of ``verilog_float``'s function of its format."""
        name = op.name
        fw = ws[0] if op.operands and isinstance(op.operands[0].type, _FLOATS) else w
        p = self.em.float_format(fw)
        sign = f"{{1'b1, {fw - 1}'d0}}"
        if name in _FLOAT_BINARY:
            return f"{p}_{_FLOAT_BINARY[name]}({xs[0]}, {xs[1]})"
        if name in _FLOAT_UNARY:
            return f"{p}_{_FLOAT_UNARY[name]}({xs[0]})"
        if name in _INTEGRAL:
            return f"{p}_integral(2'd{_INTEGRAL[name]}, {xs[0]})"
        if name == "arith.cmpf":
            return f"{p}_cmp(4'd{op.predicate.value.data}, {xs[0]}, {xs[1]})"
        if name == "arith.negf":
            return f"{xs[0]} ^ {sign}"
        if name == "math.absf":
            return f"{xs[0]} & ~{sign}"
        if name == "arith.select":
            return f"{xs[0]} ? {xs[1]} : {xs[2]}"
        if name in ("arith.sitofp", "arith.uitofp"):  # the integer widened to 64 bits first
            signed = name == "arith.sitofp"
            wide = (f"{{{{{64 - ws[0]}{{{xs[0]}[{ws[0] - 1}]}}}}, {xs[0]}}}" if signed else f"64'({xs[0]})") \
                if ws[0] < 64 else xs[0]
            return f"{p}_from_int(1'b{int(signed)}, {wide})"
        if name == "arith.fptosi":  # through a 32-bit integer (64-bit for i64), as numpy and C on x86
            return f"{w}'({p}_to_int(1'b{int(w == 64)}, {xs[0]}))"
        if name == "arith.bitcast" and ws[0] == w:
            return xs[0]
        raise LoomError(f"'{name}' on {', '.join(str(v.type) for v in op.operands)} has no RTL form here", where=where)

    def fold(self, op, xs):
        """``op``'s value when its operands are compile-time constants (``kernel_eval``'s evaluator), else None."""
        if op.name != "arith.constant" and not (xs and all(x in self.consts for x in xs)):
            return None
        try:
            return self.em.evaluator().op(op, [self.consts[x] for x in xs])
        except LoomError:  # an op the evaluator refuses here is emitted (and refused) as usual
            return None

    def lookup(self, op, xs, ws, w, where) -> str:
        """A constant table read. With every index variable: one ROM (an ``initial`` block) shared by the reads.
        With some indices constant (a weight per unrolled channel): a ``case`` over the entries the variable
        ones reach, per read: no memory read port to share, so synthesis (Yosys's SAT-based sharing tried every
        pair of a weight ROM's 108 ports) and multipliers see a few constants."""
        table = op.table.root_reference.data
        if table not in self.em.ir.tables:
            raise LoomError(f"ubuf.lookup reads @{table}, which has no contents", where=where)
        mins, array = self.em.ir.tables[table]
        shape = array.shape[::-1]
        flat = np.asarray(array).reshape(-1)
        strides = [int(np.prod(shape[:k], dtype=np.int64)) for k in range(len(shape))]
        fixed = {k: _signed_value(self.consts[x], wk) - m
                 for k, (x, wk, m) in enumerate(zip(xs, ws, mins)) if x in self.consts}
        variable = [k for k in range(len(xs)) if k not in fixed]
        if fixed and variable:
            if any(not 0 <= i < shape[k] for k, i in fixed.items()):
                return f"{w}'d0"
            base = sum(i * strides[k] for k, i in fixed.items())
            # the entries in the order of the variable indices' flat index (the first fastest)
            words = [base + sum(i * strides[k] for k, i in zip(variable, reversed(at)))
                     for at in itertools.product(*[range(shape[k]) for k in reversed(variable)])]
            ix, inside = self.index([xs[k] for k in variable], [mins[k] for k in variable],
                                    [shape[k] for k in variable], f"lut_{table}_ix")
            sel = self.em.fresh(f"lut_{table}")
            self.em.lines.append(f"  logic [{w - 1}:0] {sel};")
            self.em.lines.append(f"  always_comb case ({ix})" + "".join(
                f" {j}: {sel} = {w}'h{_bits(flat[e], w):x};" for j, e in enumerate(words)) +
                f" default: {sel} = '0; endcase")
            return f"({inside}) ? {sel} : {w}'d0"
        rom = f"rom_{table}"
        if not any(line.startswith(f"  logic [{w - 1}:0] {rom} ") for line in self.em.lines):
            self.em.lines.append(f"  logic [{w - 1}:0] {rom} [0:{flat.size - 1}];")
            self.em.lines.append("  initial begin " + " ".join(
                f"{rom}[{i}] = {w}'h{_bits(v, w):x};" for i, v in enumerate(flat)) + " end")
        ix, inside = self.index(xs, mins, shape, f"{rom}_ix")
        return f"({inside}) ? {rom}[{ix}] : {w}'d0"

    def index(self, xs, mins, shape, stem) -> tuple[str, str]:
        """The flat index of a table read (last dim slowest, storage order; each index signed, shifted by the
        table's min) as a wire, and the condition that every index is inside the table."""
        terms, stride, inside = [], 1, []
        for x, m, e in zip(xs, mins, shape):
            ix = f"(64'($signed({x})) - 64'sd{m})"
            terms.append(f"{ix} * {stride}")
            inside.append(f"{ix} >= 0 && {ix} < {e}")
            stride *= e
        bits = address_bits(stride)
        wire = self.em.fresh(stem)
        self.em.lines.append(f"  wire [{bits - 1}:0] {wire} = {bits}'(" + " + ".join(terms) + ");")
        return wire, " && ".join(inside)


def _bits(value, width: int) -> int:
    """A compile-time value's ``width``-bit pattern (two's complement; an f32's IEEE encoding)."""
    v = np.asarray(value)
    if v.dtype.kind == "f":
        return int(v.astype(np.float32).view(np.uint32))
    return int(v.astype(np.int64) if v.dtype.kind != "u" else v) & ((1 << width) - 1)


def _signed_value(value, width: int) -> int:
    """A compile-time value read as a signed ``width``-bit integer (the RTL's ``$signed`` index)."""
    bits = _bits(value, width)
    return bits - (1 << width) if bits >> (width - 1) else bits


__all__ = ["KernelOps", "address_bits", "value_bits"]
