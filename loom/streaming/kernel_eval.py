"""Evaluate a ``ubuf.kernel`` region on numpy arrays: every point of a stage at once.

A small interpreter of the arith / math ops the kernels hold (MLIR semantics:
integers are signless bit patterns, kept here as unsigned numpy arrays of the
same width, ``i1`` as bool; the op picks signedness: ``divui`` vs ``floordivsi`` / ``ceildivsi``,
``extui`` vs ``extsi``, ``ult`` vs ``slt``), plus ``ubuf.lookup`` (a constant
table entry, bounds checked) and ``ubuf.yield``. Block arguments are bound to
arrays that broadcast against each other (coordinate grids, the values each read
port delivered), so one pass over the region computes a whole tile. An op it does
not know is a ``LoomError`` naming it.
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import BFloat16Type, Float32Type, Float64Type, IndexType, IntegerType
from xdsl.ir import Attribute, Block

from loom.errors import LoomError
from loom.frontends.pipeline.cpu_scalar import MATH_OPS
from loom.frontends.pipeline.mathfn import evaluate_math

_MATH_FUNCTIONS = {op.name: fn for fn, op in MATH_OPS.items()}  # "math.sqrt" -> "sqrt"
_UNSIGNED = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}
_SIGNED = {8: np.int8, 16: np.int16, 32: np.int32, 64: np.int64}


def storage_dtype(t: Attribute, where: str = "ubuf.kernel"):
    """The numpy dtype holding values of MLIR type ``t`` (integers unsigned, i1 bool, index int64); ``where``
    names the value in the error for a type the simulator does not hold."""
    if isinstance(t, IntegerType):
        w = t.width.data
        if w != 1 and w not in _UNSIGNED:
            raise LoomError(f"values of type {t} are not supported by the value simulator (integers of "
                            "1, 8, 16, 32 or 64 bits)", where=where)
        return np.bool_ if w == 1 else _UNSIGNED[w]
    if isinstance(t, IndexType):
        return np.int64
    if isinstance(t, (Float32Type, BFloat16Type)):  # bf16 tables hold f32 values with zero low bits
        return np.float32
    if isinstance(t, Float64Type):
        return np.float64
    raise LoomError(f"values of type {t} are not supported by the value simulator", where=where)


def from_numpy(array: np.ndarray, t: Attribute) -> np.ndarray:
    """A numpy array of a pipeline dtype (u8, i16, f32, bool, ...) as the storage of MLIR type ``t``."""
    dt = storage_dtype(t)
    a = np.asarray(array)
    if dt in (np.bool_, np.float32, np.float64, np.int64):
        return a.astype(dt, copy=False)
    return a.view(dt) if a.dtype.itemsize == np.dtype(dt).itemsize else a.astype(dt)


def to_numpy(value: np.ndarray, dtype) -> np.ndarray:
    """A kernel result back in the pipeline's dtype (same bits)."""
    v = np.asarray(value)
    dtype = np.dtype(dtype)
    if dtype.kind in "iu" and v.dtype.kind in "iu" and v.dtype.itemsize == dtype.itemsize:
        return v.view(dtype)
    return v.astype(dtype)


def _signed(v):
    v = np.asarray(v)
    if v.dtype == np.bool_:
        return v.astype(np.int8) * -1
    return v.view(_SIGNED[v.dtype.itemsize * 8]) if v.dtype.kind == "u" else v


def _ceil_divide(a, b):
    """arith.ceildivsi: towards +inf (floor, plus 1 when the division is not exact; no negation to overflow)."""
    q = np.floor_divide(a, b)
    return q + (a - q * b != 0).astype(q.dtype)


def _unsigned_of(v, t):
    if t.width.data == 1:
        return _low_bit(np.asarray(v).astype(np.int64))
    return np.asarray(v).astype(_SIGNED[t.width.data]).view(_UNSIGNED[t.width.data])


# integer ops that are arithmetic modulo 2 on i1 (numpy's bool add is an or, its subtract raises, and there
# is no signed 1-bit type): evaluated on i8 with true as -1 (0xFF, sign-extended), the low bit kept
_MODULO_2 = {"arith.addi", "arith.subi", "arith.muli", "arith.divui", "arith.remui", "arith.andi", "arith.ori",
             "arith.xori", "arith.shli", "arith.shrui", "arith.minui", "arith.maxui", "arith.minsi", "arith.maxsi",
             "arith.floordivsi", "arith.ceildivsi", "arith.remsi", "arith.shrsi", "math.absi"}
_I8 = IntegerType(8)


def _sign_extended(v):
    return np.where(np.asarray(v), np.uint8(0xFF), np.uint8(0))


def _low_bit(v):
    return (np.asarray(v) & 1).astype(bool)


def _width(t):
    return t.width.data if isinstance(t, IntegerType) else 64


_CMPI = {0: np.equal, 1: np.not_equal, 2: ("s", np.less), 3: ("s", np.less_equal), 4: ("s", np.greater),
         5: ("s", np.greater_equal), 6: ("u", np.less), 7: ("u", np.less_equal), 8: ("u", np.greater),
         9: ("u", np.greater_equal)}


def _cmpf(pred, a, b):
    unordered = np.isnan(a) | np.isnan(b)
    base = {1: np.equal, 2: np.greater, 3: np.greater_equal, 4: np.less, 5: np.less_equal, 6: np.not_equal,
            8: np.equal, 9: np.greater, 10: np.greater_equal, 11: np.less, 12: np.less_equal, 13: np.not_equal}
    if pred == 0:
        return np.zeros(np.broadcast(a, b).shape, bool)
    if pred == 15:
        return np.ones(np.broadcast(a, b).shape, bool)
    if pred == 7:
        return ~unordered
    if pred == 14:
        return unordered
    r = base[pred](a, b)
    return (r & ~unordered) if pred <= 6 else (r | unordered)


def _minmax(fn, signed):
    def apply(a, b):
        if signed:
            return fn(_signed(a), _signed(b)).view(np.asarray(a).dtype)
        return fn(a, b)
    return apply


def _ieee_maximum(a, b):
    """arith.maximumf: a NaN propagates, -0 < +0 (numpy's ``maximum`` returns its second operand on equal
    zeros: maximum(+0, -0) is -0)."""
    return np.where(a == b, np.where(np.signbit(a), b, a), np.maximum(a, b))


def _ieee_minimum(a, b):
    """arith.minimumf: a NaN propagates, -0 < +0."""
    return np.where(a == b, np.where(np.signbit(a), a, b), np.minimum(a, b))


def _binary(name):
    return {
        "arith.addi": np.add, "arith.subi": np.subtract, "arith.muli": np.multiply, "arith.andi": np.bitwise_and,
        "arith.ori": np.bitwise_or, "arith.xori": np.bitwise_xor, "arith.divui": np.floor_divide,
        "arith.remui": np.remainder, "arith.addf": np.add, "arith.subf": np.subtract, "arith.mulf": np.multiply,
        "arith.divf": np.divide, "arith.maximumf": _ieee_maximum, "arith.minimumf": _ieee_minimum,
        "arith.minui": np.minimum, "arith.maxui": np.maximum,
        "arith.minsi": _minmax(np.minimum, True), "arith.maxsi": _minmax(np.maximum, True),
    }.get(name)


# ops never evaluated over a whole buffer: a table lookup checks its indices against the table, and on
# the window only (the rest of the buffer may hold indices the port never reads)
_NOT_SHARED = {"ubuf.lookup", "ubuf.yield"}


class PortSource:
    """A read port that is a translation: the whole buffer and the function cutting the port's window."""

    def __init__(self, buffer: str, array: np.ndarray, take):
        self.buffer, self.array, self.take = buffer, array, take


class KernelEvaluator:
    """Evaluates kernel regions; ``tables`` maps a constant table name to (mins, numpy array)."""

    def __init__(self, tables: dict, where: str):
        self.tables, self.where = tables, where
        self._whole = {}  # structural key -> value over a whole source buffer (see ``run``'s sources)
        self._typed = set()  # ids of the blocks whose value types are known to be held

    def _check_types(self, block: Block):
        """Every value of ``block`` has a type the simulator holds; else an error naming the argument or op
        (not the first numpy conversion that meets it)."""
        if id(block) in self._typed:
            return
        for a in block.args:
            storage_dtype(a.type, f"{self.where}, argument {a.index}")
        for k, op in enumerate(block.ops):
            for r in op.results:
                storage_dtype(r.type, f"{self.where}, op {k} ({op.name})")
        self._typed.add(id(block))

    def run(self, block: Block, args: list, sources: list | None = None) -> np.ndarray:
        """``sources[i]``, if given, is a ``PortSource`` for argument i: the whole buffer the argument is a
        translated window of. Element-wise ops on one port's window (and constants) are then evaluated
        once per buffer and windowed, so the nine taps of a 3x3 window share one ``x * x``."""
        if len(args) != len(block.args):
            raise LoomError(f"the kernel region takes {len(block.args)} arguments, got {len(args)}",
                            where=self.where)
        self._check_types(block)
        env = {}
        shared = {}  # SSA value -> (structural key, the PortSource it windows, or None for a constant)
        for i, (a, v) in enumerate(zip(block.args, args)):
            env[a] = from_numpy(v, a.type)
            src = sources[i] if sources else None
            if src is not None:
                shared[a] = (("port", src.buffer, str(a.type)), src)
                self._whole.setdefault(shared[a][0], from_numpy(src.array, a.type))
        with np.errstate(all="ignore"):  # integer ops wrap, float ops give inf/nan: the semantics we emulate
            for op in block.ops:
                if op.name == "ubuf.yield":
                    return env[op.operands[0]]
                key = self._shared_key(op, shared) if sources else None
                if key is None:
                    env[op.results[0]] = self.op(op, [env[o] for o in op.operands])
                    continue
                (skey, src) = shared[op.results[0]] = key
                if skey not in self._whole:
                    self._whole[skey] = self.op(op, [self._whole.get(shared[o][0], env[o]) for o in op.operands])
                env[op.results[0]] = self._whole[skey] if src is None else src.take(self._whole[skey])
        raise LoomError("the kernel region has no ubuf.yield", where=self.where)

    def _shared_key(self, op, shared):
        """A structural key when ``op`` is element-wise over one port's window and constants, else None."""
        if op.name == "arith.constant":
            return ("const", str(op.value), str(op.results[0].type)), None
        if op.name in _NOT_SHARED or len(op.results) != 1 or not all(o in shared for o in op.operands):
            return None
        srcs = {id(shared[o][1]): shared[o][1] for o in op.operands if shared[o][1] is not None}
        if len(srcs) != 1:  # constants only, or windows of two ports: evaluate as usual
            return None
        key = (op.name, str(op.results[0].type), str(op.attributes.get("predicate")),
               tuple(shared[o][0] for o in op.operands))
        return key, next(iter(srcs.values()))

    def op(self, op, xs):
        rt = op.results[0].type
        if op.name in _MODULO_2 and isinstance(rt, IntegerType) and rt.width.data == 1:
            return _low_bit(self._evaluate(op, [_sign_extended(x) for x in xs], _I8))
        return self._evaluate(op, xs, rt)

    def _evaluate(self, op, xs, rt):
        """The value of ``op`` on ``xs``, its result of type ``rt``."""
        name = op.name
        fn = _binary(name)
        if fn is not None:
            out = fn(*xs)
            return np.asarray(out).astype(storage_dtype(rt), copy=False)
        if name == "arith.constant":
            return self.constant(op.value, rt)
        if name == "arith.select":
            return np.where(xs[0], xs[1], xs[2])
        if name == "arith.cmpi":
            kind = _CMPI[op.predicate.value.data]
            if isinstance(kind, tuple):
                sign, f = kind
                a, b = (_signed(xs[0]), _signed(xs[1])) if sign == "s" else (xs[0], xs[1])
                return f(a, b)
            return kind(xs[0], xs[1])
        if name == "arith.cmpf":
            return _cmpf(op.predicate.value.data, xs[0], xs[1])
        if name in ("arith.floordivsi", "arith.ceildivsi", "arith.remsi", "arith.shrsi"):
            a, b = _signed(xs[0]), _signed(xs[1])
            out = {"arith.floordivsi": np.floor_divide, "arith.ceildivsi": _ceil_divide, "arith.remsi": np.fmod,
                   "arith.shrsi": np.right_shift}[name](a, b)
            return np.asarray(out).view(storage_dtype(rt))
        if name in ("arith.shli", "arith.shrui"):
            f = np.left_shift if name == "arith.shli" else np.right_shift
            return np.asarray(f(xs[0], xs[1])).astype(storage_dtype(rt), copy=False)
        if name == "arith.extui":
            return np.asarray(xs[0]).astype(storage_dtype(rt))
        if name == "arith.extsi":
            return _unsigned_of(_signed(xs[0]), rt)
        if name == "arith.trunci":
            if _width(rt) == 1:
                return (np.asarray(xs[0]) & 1).astype(bool)
            return np.asarray(xs[0]).astype(storage_dtype(rt))
        if name == "arith.index_cast":
            if isinstance(rt, IndexType):
                return _signed(xs[0]).astype(np.int64)
            return _unsigned_of(xs[0], rt)
        if name == "arith.sitofp":
            return _signed(xs[0]).astype(storage_dtype(rt))
        if name == "arith.uitofp":
            return np.asarray(xs[0]).astype(storage_dtype(rt))
        if name == "arith.fptosi":  # to i1: through i8, the low bit kept
            return _unsigned_of(np.asarray(xs[0]).astype(_SIGNED.get(_width(rt), np.int8)), rt)
        if name in ("arith.extf", "arith.truncf"):
            return np.asarray(xs[0]).astype(storage_dtype(rt))
        if name == "arith.bitcast":
            return self.bitcast(op, xs[0], rt)
        if name == "arith.negf":
            return np.negative(xs[0])
        if name == "math.fma":  # the f32 product is exact in f64; the f64 sum then rounds to f32 (a second
            # rounding differs from fmaf's single one only when the f64 sum lands halfway between two f32s)
            wide = [np.asarray(v).astype(np.float64) for v in xs]
            return (wide[0] * wide[1] + wide[2]).astype(storage_dtype(rt))
        if name == "math.absi":  # two's complement: the minimum stays itself
            x = _signed(xs[0])
            return _unsigned_of(np.where(x < 0, -x, x).astype(x.dtype), rt)
        if name == "math.absf":
            return np.abs(xs[0])
        if name in _MATH_FUNCTIONS:  # the pipeline language's math functions, with its semantics
            return evaluate_math(_MATH_FUNCTIONS[name], xs).astype(storage_dtype(rt), copy=False)
        if name == "ubuf.lookup":
            return self.lookup(op, xs)
        raise LoomError(f"the value simulator cannot evaluate '{name}'", where=self.where)

    def bitcast(self, op, x, rt):
        """The same bits as ``rt``; a cast between widths (xDSL lets index stand for any) would reshape the
        array numpy views."""
        x, dt = np.ascontiguousarray(x), np.dtype(storage_dtype(rt))
        if x.dtype.itemsize != dt.itemsize:
            raise LoomError(f"arith.bitcast from {op.operands[0].type} to {rt} changes the width "
                            f"({8 * x.dtype.itemsize} to {8 * dt.itemsize} bits); the value simulator bitcasts "
                            "between types of one width", where=self.where)
        return x.view(dt)

    @staticmethod
    def constant(attr, t):
        dt = storage_dtype(t)
        v = attr.value.data
        if dt == np.bool_:
            return np.asarray(bool(v))
        if np.dtype(dt).kind == "u":
            return np.asarray(int(v) & ((1 << _width(t)) - 1), dtype=dt)
        return np.asarray(v, dtype=dt)

    def lookup(self, op, xs):
        table = op.table.root_reference.data
        if table not in self.tables:
            raise LoomError(f"ubuf.lookup reads @{table}, which is not a ubuf.constant with contents",
                            where=self.where)
        mins, array = self.tables[table]
        shape = array.shape[::-1]  # extents in dim order
        if len(xs) != len(shape):  # before zip, which would drop an extra index
            raise LoomError(f"ubuf.lookup reads @{table} with {len(xs)} indices; it has {len(shape)} dims",
                            where=self.where)
        idx = [_signed(x).astype(np.int64) - m for x, m in zip(xs, mins)]
        for k, (ix, e) in enumerate(zip(idx, shape)):
            if ix.size and (ix.min() < 0 or ix.max() >= e):
                raise LoomError(f"ubuf.lookup reads @{table} outside its {e} entries in dimension {k}",
                                where=self.where)
        idx = np.broadcast_arrays(*idx)
        return from_numpy(array[tuple(reversed(idx))], op.results[0].type)


__all__ = ["KernelEvaluator", "PortSource", "storage_dtype", "from_numpy", "to_numpy"]
