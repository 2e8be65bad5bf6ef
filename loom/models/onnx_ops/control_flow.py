"""Control flow: If and Loop. An If's condition known at import inlines the branch it picks; with one known only when
the model runs both branches become layers guarded by it (``Layer.guard``: the runtime runs only the branch taken)
and a select takes the outputs of the branch taken, so the branches must give outputs of one shape and dtype (loom's
shapes are static). A Loop is unrolled: its trip count must be known at import; a condition known only at run time
guards each iteration (none runs after it turned false) and keeps the loop-carried values of the last one that ran,
and then no scan output is allowed (their length would depend on the values)."""

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
    flag = n.b.view(n.b.as_bool(cond), ())
    then = _run_when(n, flag, True, n.attrs["then_branch"], "then_branch")
    other = _run_when(n, flag, False, n.attrs["else_branch"], "else_branch")
    if len(then) != len(other):
        raise n.error(f"the branches give {len(then)} and {len(other)} outputs")
    return tuple(_choose(n, k, flag, a, b) for k, (a, b) in enumerate(zip(then, other)))


def _run_when(n: Node, flag: Tensor, value: bool, graph, name: str, bound=()):
    """Subgraph ``graph`` built as layers that run only when ``flag`` is ``value`` (and the enclosing guard holds):
    a branch not taken does no work and checks no positions (they may be out of range where it is not taken)."""
    outer = n.b.guard
    n.b.guard = None  # (the combined flag is computed on every run)
    want = flag if value else n.b.logical_not(flag)
    if outer is not None:
        held = outer[0] if outer[1] else n.b.logical_not(outer[0])
        want = n.b.logical("and", held, want)
    n.b.guard = (want, True)
    try:
        return n.run_graph(graph, name, bound)
    finally:
        n.b.guard = outer


def _choose(n: Node, k: int, flag: Tensor, a, b, names=("then_branch", "else_branch")) -> Tensor:
    """Output k: ``a`` (the then-branch's value) where the run-time condition holds, else ``b``."""
    a, b = (n.b.as_bool(v) if isinstance(v, Condition) else
            n.b.constant(f"{n.proto.name or n.op}_out{k}", v) if isinstance(v, np.ndarray) else v for v in (a, b))
    if a.shape != b.shape or a.dtype != b.dtype:
        raise n.error(f"output {k} is {a.dtype}{list(a.shape)} in {names[0]} but {b.dtype}{list(b.shape)} in "
                      f"{names[1]}; with a condition known only when the model runs loom computes both and selects, "
                      "so they must match (a condition computed from constants and shapes is known at import)")
    if a is b:
        return a
    if a.dtype == BOOL:  # (masks select as numbers)
        return n.b.as_bool(n.b.select(flag, n.b.cast(a, np.int32), n.b.cast(b, np.int32)))
    return n.b.select(flag, a, b)


# iterations a Loop may unroll to (each one's nodes become layers)
MAX_UNROLLED = 256


def _loop(n: Node):
    body = n.attrs["body"]
    trip = n.const(0, "trip count M")
    if trip is None or trip.size != 1:
        raise n.error("needs a trip count M known at import (loom unrolls the loop; a loop bounded only by its "
                      "condition has a run-time length)")
    count = int(trip.reshape(-1)[0])
    if count > MAX_UNROLLED:
        raise n.error(f"a trip count of {count}: loom unrolls loops up to {MAX_UNROLLED} iterations")
    carried = [n.b.constant(f"{n.op}_v{k}", v) if isinstance(v, np.ndarray) else v for k, v in enumerate(n.inputs[2:])]
    cond = n.inputs[1] if len(n.inputs) > 1 and n.inputs[1] is not None else np.array(True)
    if len(body.output) > 1 + len(carried) and any(cond is t for t in n.b.inputs):
        # scan outputs' length depends on a condition given as a model input: its example's value, like a shape's
        cond = n.const(1, "condition (with scan outputs, a length)")
    scans: list[list] = []
    running = None  # the run-time condition of the iteration being built (None: known true)
    for i in range(count):
        cond = _known(n, cond)
        if isinstance(cond, np.ndarray):
            if not bool(cond.reshape(-1)[0]):
                break
        else:
            flag = n.b.view(n.b.as_bool(cond), ())
            running = flag if running is None else n.b.logical("and", running, flag)
        bound = [np.array(i, np.int64), cond, *carried]
        outs = n.run_graph(body, f"body iteration {i}", bound) if running is None else \
            _run_when(n, running, True, body, f"body iteration {i}", bound)  # (no work once the loop has stopped)
        if len(outs) < 1 + len(carried):
            raise n.error(f"the body gives {len(outs)} outputs for a condition and {len(carried)} loop-carried values")
        cond, new, scan = outs[0], list(outs[1:1 + len(carried)]), outs[1 + len(carried):]
        if running is not None:
            if scan:
                raise n.error("scan outputs with a condition known only when the model runs: their length would "
                              "depend on the values (loom's shapes are static)")
            new = [_choose(n, k, running, a, b, (f"iteration {i}", "the value before it"))
                   for k, (a, b) in enumerate(zip(new, carried))]
        carried = [n.b.constant(f"{n.op}_v{k}", v) if isinstance(v, np.ndarray) else v for k, v in enumerate(new)]
        scans.append(scan)
    stacked = []
    for k in range(len(body.output) - 1 - len(carried)):
        if not scans:
            raise n.error("scan outputs of a loop that runs no iteration are empty (loom has no empty tensors)")
        parts = [n.b.constant(f"{n.op}_s{k}", v) if isinstance(v, np.ndarray) else v for v in (s[k] for s in scans)]
        stacked.append(n.b.concat([n.b.view(p, (1, *p.shape)) for p in parts], 0))
    return (*carried, *stacked)


def _known(n: Node, cond):
    """A condition as a constant where it is one."""
    if isinstance(cond, Tensor) and n.b.is_constant(cond):
        return n.b.value(cond)
    return cond


OPS = {"If": _if, "Loop": _loop}
