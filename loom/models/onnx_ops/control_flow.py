"""Control flow: If. A condition known at import inlines the branch it picks; one known only when the model runs
computes both branches (their nodes become layers like any other) and selects between their outputs element-wise,
so the branches must give outputs of one shape and dtype (loom's shapes are static)."""

from __future__ import annotations

import numpy as np

from loom.models.graph import BOOL, Condition, Tensor
from loom.models.onnx_ops.node import Node


def _if(n: Node):
    cond = n.inputs[0]
    if isinstance(cond, Tensor) and n.b.is_constant(cond):
        cond = n.b.value(cond)
    size = cond.size if isinstance(cond, (np.ndarray, Tensor)) else int(np.prod(cond.shape))
    if size != 1:
        raise n.error(f"the condition must have one element, got shape {list(cond.shape)}")
    if isinstance(cond, np.ndarray):  # known at import: only the branch taken is built
        branch = "then_branch" if bool(cond.reshape(-1)[0]) else "else_branch"
        return tuple(n.run_graph(n.attrs[branch], branch))
    then = n.run_graph(n.attrs["then_branch"], "then_branch")
    other = n.run_graph(n.attrs["else_branch"], "else_branch")
    if len(then) != len(other):
        raise n.error(f"the branches give {len(then)} and {len(other)} outputs")
    flag = n.b.view(n.b.as_bool(cond) if isinstance(cond, Condition) else cond, ())
    return tuple(_choose(n, k, flag, a, b) for k, (a, b) in enumerate(zip(then, other)))


def _choose(n: Node, k: int, flag: Tensor, a, b) -> Tensor:
    """Output k: the then-branch's value where the run-time condition holds, else the else-branch's."""
    a, b = (n.b.as_bool(v) if isinstance(v, Condition) else
            n.b.constant(f"{n.proto.name or n.op}_out{k}", v) if isinstance(v, np.ndarray) else v for v in (a, b))
    if a.shape != b.shape or a.dtype != b.dtype:
        raise n.error(f"output {k} is {a.dtype}{list(a.shape)} in then_branch but {b.dtype}{list(b.shape)} in "
                      "else_branch; with a condition known only when the model runs loom computes both and selects, "
                      "so they must match (a condition computed from constants and shapes picks one at import)")
    if a is b:
        return a
    if a.dtype == BOOL:  # (masks select as numbers)
        return n.b.as_bool(n.b.select(flag, n.b.cast(a, np.int32), n.b.cast(b, np.int32)))
    return n.b.select(flag, a, b)


OPS = {"If": _if}
