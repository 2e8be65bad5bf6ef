"""Reference realisation of a pipeline with numpy (the CPU reference).

Every Func is realised over its inferred region, producers first; inlined and
buffered schedules compute the same values, so this is the ground truth the
accelerator simulation is compared against. Arrays store a Func's dimensions
reversed: ``f[x, y]`` over a w x h region is an array of shape (h, w).

Pure definitions are evaluated at once over the whole region; an update is
evaluated once per RDom point (RVars innermost first) and vectorised over its
pure Vars, which is exact because pure points of an update never interact.
"""

from __future__ import annotations

import itertools

import numpy as np

from loom.errors import LoomError

from .bounds import infer_bounds
from .expr import BinOp, Call, Cast, Const, RVar, Select, Unary, Var, walk
from .func import BoundaryFunc, Func, ImageParam, with_bound_inputs
from .graph import FuncGraph, resolve, validate_schedules
from .mathfn import MathCall, evaluate_math
from .mirror import PERIODIC_KINDS, mirror_coordinates
from .param import Param, param_values, params_of, refuse_unknown_inputs
from .types import BFloat16, Float32, Type, convert, round_to_bf16


class AxisRange:
    """A Var's values laid along one array axis: lo, lo+1, ..., lo+n-1."""

    __slots__ = ("axis", "lo", "n", "ndim")

    def __init__(self, axis, lo, n, ndim):
        self.axis, self.lo, self.n, self.ndim = axis, lo, n, ndim

    def array(self):
        shape = [1] * self.ndim
        shape[self.axis] = self.n
        return np.arange(self.lo, self.lo + self.n, dtype=np.int32).reshape(shape)


class Realization:
    """A realised Func: values plus the minimum coordinate of each dimension."""

    def __init__(self, name, array, mins):
        self.name = name
        self.array = array
        self.mins = list(mins)


class Evaluator:
    """Evaluates expressions over a grid given realised producers."""

    def __init__(self, realized: dict, consumer=None):
        self.realized = realized  # id(Func or ImageParam) -> Realization
        self.consumer = consumer

    def eval(self, e, env):
        if isinstance(e, Const):
            return np.array(e.value, dtype=e.type.dtype)
        if isinstance(e, (Var, RVar)):
            v = env[e.name]
            return v.array() if isinstance(v, AxisRange) else np.array(v, dtype=np.int32)
        if isinstance(e, Call):
            return self.call(e, env)
        if isinstance(e, Cast):
            return convert(self.eval(e.value, env), e.value.type, e.type)
        if isinstance(e, Select):
            return np.where(self.eval(e.cond, env), self.eval(e.t, env), self.eval(e.f, env)).astype(e.type.dtype)
        if isinstance(e, Unary):
            v = self.eval(e.value, env)
            if e.op == "abs":
                if e.value.type.is_signed:
                    return np.abs(v.astype(np.int64)).astype(e.type.dtype)
                return np.abs(v) if e.type.is_float else v
            return ~v
        if isinstance(e, BinOp):
            return binary(e.op, self.eval(e.a, env), self.eval(e.b, env), e.a.type)
        if isinstance(e, Param):  # its checked value, stored with the inputs by realize_all
            r = self.realized.get(id(e))
            if r is None:  # a caller that realises Funcs itself (the streaming simulator): the default value
                return np.array(param_values([e], {})[e.name])
            return np.array(r.array)
        if isinstance(e, MathCall):
            return evaluate_math(e.name, [self.eval(a, env) for a in e.args], e.type.dtype)
        raise TypeError(f"cannot evaluate {e!r}")

    def call(self, e: Call, env):
        target = resolve(self.consumer, e.target) if self.consumer is not None else e.target
        r = self.realized[id(target)]
        nd = len(e.args)
        arr = r.array
        # fast path: every index is Var + constant or a constant -> slicing, no gather
        fast = []
        for i, a in enumerate(e.args):
            s = _axis_offset(a, env)
            if s is None:
                fast = None
                break
            fast.append(s)
        if fast is not None:
            out_ndim = max([s[0].ndim for s in fast if s[0] is not None], default=0)
            index, axes = [], []
            for i in reversed(range(nd)):  # storage order
                rng, off = fast[i]
                start = (rng.lo if rng is not None else 0) + off - r.mins[i]
                if rng is None:
                    self._check(target, i, start, start, arr.shape[nd - 1 - i], e)
                    index.append(start)
                else:
                    self._check(target, i, start, start + rng.n - 1, arr.shape[nd - 1 - i], e)
                    index.append(slice(start, start + rng.n))
                    axes.append(rng.axis)
            if len(set(axes)) == len(axes):
                sub = arr[tuple(index)]
                order = np.argsort(axes)
                sub = np.transpose(sub, order) if len(axes) > 1 else sub
                full = [1] * out_ndim
                for k, ax in enumerate(sorted(axes)):
                    full[ax] = sub.shape[k]
                return sub.reshape(full) if out_ndim else sub
        idx = [self.eval(a, env).astype(np.int64) - r.mins[i] for i, a in enumerate(e.args)]
        for i in range(nd):
            extent = arr.shape[nd - 1 - i]
            if idx[i].size and (idx[i].min() < 0 or idx[i].max() >= extent):
                raise LoomError(f"read of '{target.name}' dimension {i} at [{idx[i].min() + r.mins[i]}, "
                                f"{idx[i].max() + r.mins[i]}] outside its realised region "
                                f"[{r.mins[i]}, {r.mins[i] + extent - 1}] in '{e!r}'",
                                where=f"Func '{getattr(self.consumer, 'name', '?')}'")
        return arr[tuple(reversed(idx))]

    def _check(self, target, dim, lo, hi, extent, e):
        if lo < 0 or hi >= extent:
            raise LoomError(f"read of '{target.name}' dimension {dim} outside its realised region in '{e!r}'",
                            where=f"Func '{getattr(self.consumer, 'name', '?')}'")


def _axis_offset(a, env):
    """(AxisRange or None, constant offset) when ``a`` is Var, Var +/- const, or const."""
    if isinstance(a, Const):
        return (None, int(a.value))
    if isinstance(a, (Var, RVar)):
        v = env[a.name]
        return (v, 0) if isinstance(v, AxisRange) else (None, int(v))
    if isinstance(a, BinOp) and a.op in ("add", "sub"):
        l, rr = _axis_offset(a.a, env), _axis_offset(a.b, env)
        if l is None or rr is None:
            return None
        if a.op == "add" and (l[0] is None or rr[0] is None):
            return (l[0] or rr[0], l[1] + rr[1])
        if a.op == "sub" and rr[0] is None:
            return (l[0], l[1] - rr[1])
    return None


def binary(op, a, b, t: Type):
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        if t == BFloat16 and op in ("add", "sub", "mul", "div", "mod"):
            return round_to_bf16(binary(op, a.astype(np.float32), b.astype(np.float32), Float32))
        if op == "add":
            return a + b
        if op == "sub":
            return a - b
        if op == "mul":
            return a * b
        if op == "div":
            if t.is_float:
                return (a / b).astype(t.dtype)
            zero = b == 0
            safe = np.where(zero, 1, b).astype(b.dtype)
            q = np.floor_divide(a, safe)
            if t.is_signed:  # Euclidean, as Halide: the remainder is never negative (q + 1 over b < 0)
                q = q + ((safe < 0) & (a - q * safe != 0))
            return np.where(zero, 0, q).astype(t.dtype)
        if op == "mod":
            if t.is_float:  # a - b * q fused as Halide computes it: b * q is exact in f64 (see kernel_eval's fma)
                q = np.floor(a / b).astype(t.dtype)
                return (a.astype(np.float64) - b.astype(np.float64) * q.astype(np.float64)).astype(t.dtype)
            zero = b == 0
            safe = np.where(zero, 1, b).astype(b.dtype)
            r = np.mod(a, safe)
            if t.is_signed:
                r = np.where(r < 0, r - safe, r)
            return np.where(zero, 0, r).astype(t.dtype)
        if op == "min":
            return np.minimum(a, b)
        if op == "max":
            return np.maximum(a, b)
        if op == "and":
            return a & b
        if op == "or":
            return a | b
        if op == "xor":
            return a ^ b
        if op in ("shl", "shr"):
            return _shift(op, a, b, t)
        if op == "lt":
            return a < b
        if op == "le":
            return a <= b
        if op == "gt":
            return a > b
        if op == "ge":
            return a >= b
        if op == "eq":
            return a == b
        if op == "ne":
            return a != b
    raise TypeError(op)


def _shift(op, a, b, t):
    """Shifts by the second operand; a negative amount shifts the other way; >= bits saturates."""
    amount = b.astype(np.int64)
    if op == "shr":
        amount = -amount
    wide = a.astype(np.int64 if t.is_signed else np.uint64)  # u64: a logical right shift
    left = np.clip(amount, 0, t.bits - 1).astype(wide.dtype)
    right = np.clip(-amount, 0, t.bits - 1).astype(wide.dtype)
    shifted = np.where(amount >= 0, wide << left, wide >> right)
    fill = np.where(wide < 0, -1, 0) if t.is_signed else 0
    shifted = np.where(amount >= t.bits, 0, np.where(-amount >= t.bits, fill, shifted))
    return shifted.astype(t.dtype)


def realize_func(f: Func, region, realized: dict) -> Realization:
    """Compute ``f`` over ``region`` from already realised producers."""
    nd = len(f.dims)
    shape = tuple(hi - lo + 1 for lo, hi in reversed(region))
    mins = [lo for lo, _ in region]
    if isinstance(f, BoundaryFunc):
        return _realize_boundary(f, region, realized)
    ev = Evaluator(realized, consumer=f)
    env = {d.name: AxisRange(nd - 1 - i, region[i][0], region[i][1] - region[i][0] + 1, nd)
           for i, d in enumerate(f.dims)}
    value = ev.eval(f.pure.value, env)
    arr = np.array(np.broadcast_to(value, shape), dtype=f.type.dtype)
    out = Realization(f.name, arr, mins)
    realized[id(f)] = out
    for d in f.updates:
        _apply_update(f, d, region, out, ev)
    return out


def _apply_update(f, d, region, out: Realization, ev: Evaluator):
    nd = len(f.dims)
    pure = [(i, a) for i, a in enumerate(d.args) if isinstance(a, Var) and not isinstance(a, RVar)]
    if any(isinstance(e, Var) and not isinstance(e, RVar) for a in d.args if not isinstance(a, Var)
           for e in walk(a)):
        # a pure Var inside a scattered index (h[inp[r, y] / 64, y]): the pure Vars become loops too, inside
        # the RVars' (Halide's order), so each point writes one element
        return _apply_update_pointwise(f, d, region, out, ev, pure)
    rvars = d.rvars  # innermost first
    ranges = [range(r.min, r.min + r.extent) for r in rvars]
    env = {}
    for i, a in enumerate(d.args):
        if isinstance(a, Var):
            env[a.name] = AxisRange(nd - 1 - i, region[i][0], region[i][1] - region[i][0] + 1, nd)
    for point in itertools.product(*reversed(ranges)):
        for r, v in zip(reversed(rvars), point):
            env[r.name] = v
        index = [None] * nd
        sub_shape = [1] * nd
        for i, a in enumerate(d.args):
            ax = nd - 1 - i
            if isinstance(a, Var):
                index[ax] = slice(None)
                sub_shape[ax] = region[i][1] - region[i][0] + 1
            else:
                pos = int(ev.eval(a, env)) - out.mins[i]
                if not 0 <= pos < out.array.shape[ax]:
                    raise LoomError(f"update writes index {pos + out.mins[i]} in dimension "
                                    f"{i}, outside its region", where=f"Func '{f.name}'")
                index[ax] = pos
        value = ev.eval(d.value, env)
        value = np.broadcast_to(value, sub_shape).astype(f.type.dtype)
        keep = tuple(slice(None) if isinstance(ix, slice) else 0 for ix in index)
        out.array[tuple(index)] = value[keep]


def _apply_update_pointwise(f, d, region, out: Realization, ev: Evaluator, pure):
    """An update whose scattered index reads a pure Var: one RVar point at a time (the first innermost), all
    the pure Vars' points at once. Each pure Var is bare in its own place, so the points of one RVar point
    write distinct elements (fancy indexing writes each once, after the value read the old ones)."""
    nd = len(f.dims)
    env = {a.name: AxisRange(nd - 1 - i, region[i][0], region[i][1] - region[i][0] + 1, nd) for i, a in pure}
    shape = [1] * nd
    for i, _ in pure:
        shape[nd - 1 - i] = region[i][1] - region[i][0] + 1
    rvars = d.rvars
    for point in itertools.product(*(range(r.min, r.min + r.extent) for r in reversed(rvars))):
        for r, v in zip(reversed(rvars), point):
            env[r.name] = v
        index = [None] * nd
        for i, a in enumerate(d.args):
            pos = np.broadcast_to(np.asarray(ev.eval(a, env), np.int64), shape) - out.mins[i]
            if pos.size and (pos.min() < 0 or pos.max() >= out.array.shape[nd - 1 - i]):
                bad = int(pos.min() if pos.min() < 0 else pos.max()) + out.mins[i]
                raise LoomError(f"update writes index {bad} in dimension {i}, outside its region",
                                where=f"Func '{f.name}'")
            index[nd - 1 - i] = pos
        value = np.broadcast_to(ev.eval(d.value, env), shape).astype(f.type.dtype)
        out.array[tuple(index)] = value


def _exterior(f: BoundaryFunc, realized):
    """constant_exterior's value: a constant, or an expression of Params (their values from ``realized``)."""
    return Evaluator(realized).eval(f.value, {})


def _realize_boundary(f: BoundaryFunc, region, realized) -> Realization:
    src = realized.get(id(f.source))
    shape = tuple(hi - lo + 1 for lo, hi in reversed(region))
    mins = [lo for lo, _ in region]
    nd = len(region)
    if src is None:  # constant exterior entirely outside the source
        arr = np.full(shape, _exterior(f, realized), dtype=f.type.dtype)
        out = Realization(f.name, arr, mins)
        realized[id(f)] = out
        return out
    box = f.source_box({f.source.name: src.array.shape})  # an ImageParam: the array given
    idx = []
    inside = np.ones(shape, dtype=bool)
    for i, (lo, hi) in enumerate(region):
        coords = np.arange(lo, hi + 1)
        if box[i][0] == -np.inf:  # an unbounded dimension: reads pass through
            clamped, ok = coords, np.ones(coords.shape, bool)
        elif f.kind in PERIODIC_KINDS:
            clamped = mirror_coordinates(coords, box[i][0], box[i][1], f.kind)
            ok = (coords >= box[i][0]) & (coords <= box[i][1])
        else:
            clamped = np.clip(coords, box[i][0], box[i][1])
            ok = (coords >= box[i][0]) & (coords <= box[i][1])
        sh = [1] * nd
        sh[nd - 1 - i] = len(coords)
        inside = inside & ok.reshape(sh)
        clamped = np.clip(clamped - src.mins[i], 0, src.array.shape[nd - 1 - i] - 1)
        idx.append(clamped.reshape(sh))
    arr = src.array[tuple(reversed(idx))]
    if f.kind == "constant_exterior":
        arr = np.where(inside, arr, np.array(_exterior(f, realized), dtype=f.type.dtype))
    out = Realization(f.name, np.array(np.broadcast_to(arr, shape), dtype=f.type.dtype), mins)
    realized[id(f)] = out
    return out


def _input_realization(p: ImageParam, array) -> Realization:
    arr = np.asarray(array)
    if arr.ndim != p.dimensions:
        raise LoomError(f"expected a {p.dimensions}-d array, got shape {arr.shape}",
                        where=f"ImageParam '{p.name}'")
    if arr.dtype != p.type.dtype:
        raise LoomError(f"expected dtype {p.type.dtype} ({p.type.name}), got {arr.dtype}",
                        where=f"ImageParam '{p.name}'")
    return Realization(p.name, arr, [0] * p.dimensions)


def refuse_non_integers(output: Func, extents, what: str) -> None:
    """Extents and origins are whole numbers (a float reached numpy's slicing as a TypeError, or was truncated)."""
    bad = next((i for i, n in enumerate(extents) if isinstance(n, (bool, np.bool_)) or
                not isinstance(n, (int, np.integer))), None)
    if bad is not None:
        raise LoomError(f"{what} {tuple(extents)}: dimension {bad} is {extents[bad]!r}, expected an int",
                        where=f"Func '{output.name}'")


def output_region(output: Func, size, origin=None):
    size = tuple(size)
    if len(size) != len(output.dims):
        raise LoomError(f"size {size} has {len(size)} dimensions but the Func has "
                        f"{len(output.dims)}", where=f"Func '{output.name}'")
    refuse_non_integers(output, size, "size")
    size = tuple(int(n) for n in size)  # numpy integers as Python ints
    negative = [i for i, n in enumerate(size) if n < 0]
    if negative:  # Halide: "The extents for buffer ... is negative"; 0 is an empty output
        raise LoomError(f"size {size}: the extent of dimension {negative[0]} is negative",
                        where=f"Func '{output.name}'")
    origin = origin or (0,) * len(size)
    refuse_non_integers(output, origin, "origin")
    return [(o, o + n - 1) for o, n in zip(origin, size)]


def realize_all(output: Func, inputs: dict, size, origin=None):
    """Realise every Func of the pipeline; returns (pipeline, regions, realisations)."""
    pipe = FuncGraph(output)
    validate_schedules(pipe)
    inputs = with_bound_inputs(pipe.params, inputs)
    for p in pipe.params:
        if p.name not in inputs:
            raise LoomError(f"no input array given", where=f"ImageParam '{p.name}'")
    scalars = params_of(pipe.funcs)
    refuse_unknown_inputs(inputs, pipe.params, scalars)
    values = param_values(scalars, inputs)
    shapes = {k: np.asarray(v).shape for k, v in inputs.items() if k not in values}
    regions = infer_bounds(pipe, output_region(output, size, origin), shapes)
    realized = {id(p): _input_realization(p, inputs[p.name]) for p in pipe.params}
    realized.update({id(p): Realization(p.name, np.array(values[p.name]), []) for p in scalars})
    for f in pipe.funcs:
        realize_func(f, regions[id(f)], realized)
    return pipe, regions, realized


def evaluate(output: Func, inputs: dict | None = None, size=None, origin=None) -> np.ndarray:
    """Realise ``output`` over ``size`` (Func dimension order) starting at ``origin``.

    ``inputs`` maps ImageParam names to numpy arrays (dimensions reversed,
    dtype matching the ImageParam). Returns the output array, dims reversed.
    """
    if size is None:
        raise LoomError(f"evaluate needs an output size", where=f"Func '{output.name}'")
    pipe, regions, realized = realize_all(output, inputs, size, origin)
    return crop(realized[id(output)], output_region(output, size, origin))


def crop(r: Realization, region) -> np.ndarray:
    """The part of a realisation covering ``region`` (updates may have realised more)."""
    nd = len(region)
    sl = tuple(slice(lo - m, hi - m + 1) for (lo, hi), m in zip(region, r.mins))
    out = r.array[tuple(reversed(sl))]
    return out if out.shape == r.array.shape else np.ascontiguousarray(out)
