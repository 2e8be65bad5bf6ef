"""Reductions over axes (Reduce*, ArgMax / ArgMin) and running sums along one (CumSum)."""

from __future__ import annotations

import numpy as np

from loom.models.onnx_ops.node import Node, all_const


def _reduce(op: str):
    def build(n: Node):
        x = n.tensor(0)
        axes = n.ints("axes")
        if axes is None and len(n.inputs) > 1 and n.inputs[1] is not None:
            axes = [int(v) for v in n.const(1, "axes")]
        if not axes and n.attrs.get("noop_with_empty_axes", 0):
            return x
        keep = bool(n.attrs.get("keepdims", 1))
        if op in _INTEGER_FOLDS and all_const(n) and n.b.value(x).dtype == np.int64:
            # shape arithmetic (the element count as ReduceProd of Shape): exact in numpy, so a condition or a
            # shape computed from it stays known at import
            axes = None if not axes else tuple(axes)
            return _INTEGER_FOLDS[op](n.b.value(x), axis=axes, keepdims=keep)
        if op in _COMPOSED_REDUCTIONS:  # a reduction of a function of x, then a function of the result
            b = n.b
            if op == "logsumexp":  # shifted by the max (the reference's compute_log_sum_exp): no overflow
                top = b.reduce("max", x, axes, True)
                top = b.select(b.compare("eq", b.unary("abs", top), float("inf")), 0.0, top)
                total = b.reduce("sum", b.unary("exp", b.binary("sub", x, top)), axes, keep)
                return b.binary("add", b.unary("log", total), top if keep else b.reduce("max", top, axes, False))
            before, after = _COMPOSED_REDUCTIONS[op]
            return after(b, b.reduce("sum", before(b, x), axes, keep))
        if x.dtype == np.dtype(np.bool_):  # the max of bools is any, the min all
            return n.b.reduce({"max": "any", "min": "all"}.get(op, op), x, axes, bool(n.attrs.get("keepdims", 1)))
        return n.b.reduce(op, x, axes, bool(n.attrs.get("keepdims", 1)))
    return build


_INTEGER_FOLDS = {"sum": np.sum, "prod": np.prod, "max": np.max, "min": np.min}


# ReduceL1 / L2 / SumSquare / LogSum: (what is summed, what is done to the sum)
_COMPOSED_REDUCTIONS = {
    "l1": (lambda b, x: b.unary("abs", x), lambda b, y: y),
    "l2": (lambda b, x: b.binary("mul", x, x), lambda b, y: b.unary("sqrt", y)),
    "sumsquare": (lambda b, x: b.binary("mul", x, x), lambda b, y: y),
    "logsum": (lambda b, x: x, lambda b, y: b.unary("log", y)),
    "logsumexp": None,
}


def _arg_reduce(op: str):
    def build(n: Node):
        return n.b.arg_reduce(op, n.tensor(0), int(n.attrs.get("axis", 0)), bool(n.attrs.get("keepdims", 1)),
                              bool(n.attrs.get("select_last_index", 0)))
    return build


def _cumsum(n: Node):
    """CumSum: reverse sums from the end (a flip before and after), exclusive ones leave out the element itself (the
    input moved one along the axis, a zero first: the same sums the reference adds)."""
    axis = n.const(1, "axis")
    if axis is None or axis.size != 1:
        raise n.error("needs a constant one-element axis")
    x = n.tensor(0)
    axis = n.b.axis(n.op, int(axis.reshape(-1)[0]), len(x.shape))
    reverse, exclusive = int(n.attrs.get("reverse", 0)), int(n.attrs.get("exclusive", 0))
    if reverse:
        x = n.b.flip(x, [axis])
    if exclusive:
        before = [1 if k == axis else 0 for k in range(len(x.shape))]
        x = n.b.slice(n.b.pad(x, before, [0] * len(x.shape)), axis, 0, x.shape[axis])
    y = n.b.cumsum(x, axis)
    return n.b.flip(y, [axis]) if reverse else y


OPS = {
    "ReduceMean": _reduce("mean"), "ReduceSum": _reduce("sum"), "ReduceMax": _reduce("max"),
    "ReduceMin": _reduce("min"), "ReduceProd": _reduce("prod"),
    "ReduceL1": _reduce("l1"), "ReduceL2": _reduce("l2"), "ReduceSumSquare": _reduce("sumsquare"),
    "ReduceLogSum": _reduce("logsum"), "ReduceLogSumExp": _reduce("logsumexp"),
    "ArgMax": _arg_reduce("argmax"), "ArgMin": _arg_reduce("argmin"), "CumSum": _cumsum,
}
