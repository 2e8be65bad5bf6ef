"""The numpy reference of an elaborated EKL kernel, independent of the generated code.

Each ``Let`` is evaluated over the grid of its bound and reduction indices with
numpy broadcasting; a sum of a product of direct subscripts (a pure Einstein
contraction) is evaluated with ``numpy.einsum``. Dynamic congruence checks and
gathers' index ranges are checked, with the same located errors the compiled
kernel gives.
"""

from __future__ import annotations

import string

import numpy as np

from loom.errors import LoomError
from loom.frontends.ekl import form as F

_BIN = {
    "+": np.add, "-": np.subtract, "*": np.multiply, "min": np.minimum, "max": np.maximum,
    "==": np.equal, "~=": np.not_equal, "<": np.less, "<=": np.less_equal, ">": np.greater, ">=": np.greater_equal,
    "&&": np.logical_and, "||": np.logical_or, "^": np.power,
}
_FN = {"log": np.log, "exp": np.exp, "sqrt": np.sqrt, "abs": np.abs, "sin": np.sin, "cos": np.cos,
       "tanh": np.tanh, "floor": np.floor, "ceil": np.ceil}
_REDUCE = {"+": np.sum, "*": np.prod, "min": np.min, "max": np.max}


def reduction_identity(op: str, dtype) -> float | int:
    """The reduction's identity in ``dtype`` (convert-esn-to-linalg's: 0, 1, +-inf or the int64 extremes)."""
    floating = np.issubdtype(dtype, np.floating)
    if np.dtype(dtype) == np.bool_:
        return op in ("min", "*")
    if op in ("min", "max"):
        sign = 1 if op == "min" else -1
        return sign * np.inf if floating else (2**63 - 1 if op == "min" else -(2**63))
    return 0 if op == "+" else 1


def extent_value(extent: F.Extent, arrays: dict[str, np.ndarray]) -> int:
    if isinstance(extent, int):
        return extent
    if extent.param not in arrays:  # a reference given the inputs only, the extent being an output's '?'
        raise LoomError(f"the extent {extent} is a size of '{extent.param}', which was not given: "
                        f"pass the out& array '{extent.param}' too (its shape fixes the extent)",
                        where=extent.param)
    return arrays[extent.param].shape[extent.axis]


def check_congruence(kernel: F.Kernel, arrays: dict[str, np.ndarray]) -> None:
    """The run-time half of esn's congruence rule: both extents of an index agree. A check naming an
    array that was not given (an output the reference computes) is skipped: a call passes every array."""
    given = lambda e: isinstance(e, int) or e.param in arrays  # noqa: E731
    for check in kernel.checks:
        if not (given(check.first) and given(check.second)):
            continue
        a, b = extent_value(check.first, arrays), extent_value(check.second, arrays)
        if a == b:
            continue
        first, second = (str(e) if isinstance(e, int) else f"{e} = {v}"
                         for e, v in ((check.first, a), (check.second, b)))
        if check.broadcast:
            # a '?' extent of 1 is not stretched at run time: the generated loops index every '?' axis
            raise check.loc.error(
                f"{check.index}: the extents {first} and {second} differ; a '?' extent must equal the other "
                "at run time (only an extent declared 1, such as f64[_1], is broadcast)")
        raise check.loc.error(
            f"index '{check.index}': upper bound {first} disagrees with {second} "
            "(index domains must be congruent)")


class _Eval:
    def __init__(self, arrays: dict[str, np.ndarray], env: dict[int, np.ndarray], grid: dict[int, np.ndarray]):
        self.arrays, self.env, self.grid = arrays, env, grid
        self.mask = None  # where the value is used: inside an arm of a guarded conditional, its condition

    def guarded(self, e: F.Select):
        """A conditional with a gather in an arm reads each arm only where it is taken (the compiled
        kernel's scf.if): range checks apply there, elsewhere the subscript is clamped and unused."""
        cond = np.asarray(self(e.cond), dtype=bool)
        outer = self.mask
        try:
            self.mask = cond if outer is None else np.logical_and(outer, cond)
            if_true = self(e.if_true)
            self.mask = ~cond if outer is None else np.logical_and(outer, ~cond)
            if_false = self(e.if_false)
        finally:
            self.mask = outer
        return np.where(cond, if_true, if_false)

    def subscript(self, e: F.Read, axis: int, sub: np.ndarray, extent: int) -> np.ndarray:
        """A subscript checked in range where it is used (``mask``), clamped elsewhere."""
        live = sub if self.mask is None else np.where(self.mask, sub, 0)
        if live.size and (live.min() < 0 or live.max() >= extent):
            bad = int(live.min() if live.min() < 0 else live.max())
            raise e.loc.error(f"index {bad} out of range for axis {axis} of '{e.tensor.name}' "
                              f"(extent {extent})")
        return sub if self.mask is None else np.clip(sub, 0, max(extent - 1, 0))

    def divisor(self, e: F.Bin, y: np.ndarray) -> None:
        """An index divisor of 0 where it is used is the compiled kernel's located error, not numpy's 0."""
        zero = np.asarray(y) == 0
        if self.mask is not None:
            zero = np.logical_and(zero, self.mask)
        if np.any(zero) and e.loc is not None:
            raise e.loc.error(f"integer division by zero in '{e.op}'")

    def tensor(self, t: F.Tensor) -> np.ndarray:
        if t.kind == "const":
            return t.value
        if t.kind == "param" and not t.is_output:
            return self.arrays[t.name]
        return self.env[id(t)]

    def __call__(self, e: F.SExpr):
        if isinstance(e, F.Const):
            return np.asarray(e.value, dtype=F.NP_DTYPES[e.dtype])
        if isinstance(e, F.Idx):
            return self.grid[id(e.index)]
        if isinstance(e, F.Read):
            data = self.tensor(e.tensor)
            subs = [self.subscript(e, axis, np.asarray(self(s), dtype=np.int64), data.shape[axis])
                    for axis, s in enumerate(e.subscripts)]
            return data[tuple(subs)] if subs else data[()]
        if isinstance(e, F.Bin):
            x, y = self(e.lhs), self(e.rhs)
            if e.op in ("/", "%") and e.lhs.dtype == "index":
                self.divisor(e, y)
            if e.op == "/":
                return np.floor_divide(x, y) if e.lhs.dtype == "index" else np.divide(x, y)
            if e.op == "%":
                return np.remainder(x, y) if e.lhs.dtype == "index" else np.fmod(x, y)
            return _BIN[e.op](x, y)
        if isinstance(e, F.Un):
            x = self(e.operand)
            return np.logical_not(x) if e.op == "~" else np.negative(x)
        if isinstance(e, F.Fn):
            return _FN[e.name](self(e.args[0]))
        if isinstance(e, F.Select):
            if F.gathers(e.if_true) or F.gathers(e.if_false):
                return self.guarded(e)
            return np.where(self(e.cond), self(e.if_true), self(e.if_false))
        if isinstance(e, F.Cast):
            x = self(e.operand)
            return np.trunc(x).astype(np.int64) if e.dtype == "index" else np.asarray(x).astype(F.NP_DTYPES[e.dtype])
        raise TypeError(e)


def _einsum_spec(let: F.Let) -> tuple[str, list[F.Read]] | None:
    """``ij,jk->ik`` when the let is a sum over a product of direct, repetition-free subscripts."""
    if let.op != "+":
        return None
    factors = F.product_factors(let.body)
    if not all(isinstance(f, F.Read) and f.is_direct() for f in factors):
        return None
    letters: dict[int, str] = {}
    for index in let.bound + let.reductions:
        letters[id(index)] = string.ascii_letters[len(letters)]
    terms = []
    for f in factors:
        ids = [id(s.index) for s in f.subscripts]
        if len(set(ids)) != len(ids):
            return None
        terms.append("".join(letters[i] for i in ids))
    out = "".join(letters[id(i)] for i in let.bound)
    if set(letters.values()) - set("".join(terms)):  # an index no factor reads (q[z] = <+ k< n[k]):
        return None  # einsum cannot make that axis; the broadcast path does
    return ",".join(terms) + "->" + out, factors


def evaluate_closed(e: F.SExpr) -> np.ndarray:
    """A scalar expression of constants only (no index, no tensor read)."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):  # the caller refuses a non-finite value
        return np.asarray(_Eval({}, {}, {})(e))


def index_grid(indices: list[F.Index], sizes: list[int]) -> dict[int, np.ndarray]:
    """Each index's values as an array broadcasting along its own axis of the let's index space."""
    grid = {}
    for k, (index, n) in enumerate(zip(indices, sizes)):
        shape = [1] * len(indices)
        shape[k] = n
        grid[id(index)] = np.arange(n, dtype=np.int64).reshape(shape)
    return grid


def evaluate(kernel: F.Kernel, arrays: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The kernel's outputs computed with numpy from ``arrays`` (inputs by parameter name)."""
    check_congruence(kernel, arrays)
    env: dict[int, np.ndarray] = {id(p): np.array(arrays[p.name]) for p in kernel.params if p.is_inout}
    results: dict[str, np.ndarray] = {}
    for let in kernel.lets:
        indices = let.bound + let.reductions
        sizes = [extent_value(i.extent, arrays) for i in indices]
        dtype = F.NP_DTYPES[let.target.dtype]
        spec = _einsum_spec(let)
        if spec is not None:
            ev = _Eval(arrays, env, {})
            value = np.einsum(spec[0], *[ev.tensor(f.tensor) for f in spec[1]])
        else:
            value = np.broadcast_to(_Eval(arrays, env, index_grid(indices, sizes))(let.body), sizes)
            if let.reductions:
                axes = tuple(range(len(let.bound), len(indices)))
                # an empty reduction is the op's identity, as the compiled kernel's accumulator starts
                # (numpy's min / max have none and raised on a zero extent)
                value = _REDUCE[let.op](value, axis=axes, initial=reduction_identity(let.op, dtype))
        value = np.ascontiguousarray(np.asarray(value).astype(dtype)).reshape(sizes[: len(let.bound)])
        env[id(let.target)] = value
        if let.target.is_output:
            results[let.target.name] = value
    return results


def output_shapes(kernel: F.Kernel, arrays: dict[str, np.ndarray]) -> dict[str, tuple[int, ...]]:
    return {t.name: tuple(extent_value(e, arrays) for e in t.shape) for t in kernel.outputs}


__all__ = ["evaluate", "check_congruence", "extent_value", "output_shapes", "LoomError"]
