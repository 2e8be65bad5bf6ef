"""``realize``: Halide's ``f.realize([W, H])`` through loom's CPU path (IR -> C).

Inputs are the arrays / Buffers bound with ``ImageParam.set`` and the values of ``Param.set``,
overridden by ``inputs`` (name -> array, Buffer or scalar). ``sizes`` are in Halide's order
(x first); the result is a ``Buffer`` whose array has the dimensions reversed (``(H, W)`` for
``[W, H]``), the same layout as ``np.asarray(halide_func.realize([W, H]))``.
"""

from __future__ import annotations

from loom.errors import LoomError
from loom.frontends.pipeline.buffer import Buffer
from loom.frontends.pipeline.func import Func, register_realizer, with_bound_inputs
from loom.frontends.pipeline.graph import FuncGraph

from .pipeline import run_cpu


def realize(output: Func, sizes, inputs: dict | None = None, origin=None):
    """A ``Buffer``, or a list of Buffers (one per element) for a Tuple-valued Func."""
    if not isinstance(output, Func):
        raise LoomError(f"realize takes a Func, got {type(output).__name__}", where="realize")
    if output.components:
        return [realize(c, sizes, inputs, origin) for c in output.components]
    if isinstance(sizes, int):
        sizes = [sizes]
    given = with_bound_inputs(FuncGraph(output).params, {
        name: value.array if isinstance(value, Buffer) else value for name, value in (inputs or {}).items()})
    return Buffer(run_cpu(output, given, tuple(sizes), origin), name=output.name)


register_realizer(realize)  # so that Func.realize works once loom.jit is imported
