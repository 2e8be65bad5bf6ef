"""Which dimension of the output each dimension of a producer carries, found from the access maps.

A producer's dimension j carries the output's dimension p when every read of it along the way from the output
indexes position j with the pure Var that carries p in the reader (``conv[x, y, o]`` read by
``out[x, y, o]``: conv's dim 2 carries out's dim 2, whatever conv's own Vars are named). The schedule uses it to
give a memory the output's channel blocks (``create_memories`` after ``accelerate(..., channels_per_cycle=...)``):
matching by Var name missed a memory defined over other names and silently computed it in space.
"""

from __future__ import annotations

from .expr import Var
from .func import Func
from .graph import FuncGraph


def output_dims(output: Func) -> dict[int, dict[int, int]]:
    """id(Func) -> {its dim index: the output dim index it carries}, for every Func the output reads. A dimension
    read at anything but a carrying Var (a constant, a shift, a reduction variable) in some read, or carrying two
    output dims in two reads, carries none."""
    graph = FuncGraph(output)
    carried: dict[int, dict[int, int]] = {id(output): {k: k for k in range(len(output.dims))}}
    lost: dict[int, set] = {}  # Func -> dims some read does not carry
    for f in reversed(graph.funcs):  # consumers before their producers
        mine = {j: p for j, p in carried.get(id(f), {}).items() if j not in lost.get(id(f), ())}
        for d in f.definitions:
            # a definition's own Var at LHS position i is f's dim i (an update may write other Vars or RVars)
            at = {a.name: mine[i] for i, a in enumerate(d.args) if isinstance(a, Var) and i in mine}
            for target, call in graph.calls_in(f, d):
                if not isinstance(target, Func) or target is f:
                    continue
                seen, gone = carried.setdefault(id(target), {}), lost.setdefault(id(target), set())
                for j, arg in enumerate(call.args):
                    p = at.get(arg.name) if isinstance(arg, Var) else None
                    if p is None or seen.get(j, p) != p:
                        gone.add(j)
                    else:
                        seen[j] = p
    return {k: {j: p for j, p in v.items() if j not in lost.get(k, ())} for k, v in carried.items()}


__all__ = ["output_dims"]
