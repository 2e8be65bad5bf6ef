"""An EKL kernel bound to a dataflow node: looping like a ``@loom.kernel`` node.

The node's input channels feed the parameters the kernel reads, in declaration order (inputs and
``inout&``); its output channels take the parameters it writes (``out&`` and ``inout&``), in order. A scalar
parameter (``s : f64``) takes a channel of its element type (``f64``: one number per round) or of ``memref<f64>``. Each
round pulls one item per input, allocates zeroed ``out&`` arrays from the output channels' static memref
types, copies each ``inout&`` item (the kernel updates it in place), calls the compiled kernel and pushes
the written arrays. Counts and element types are checked before the graph runs, naming the node.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from xdsl.dialects.builtin import DYNAMIC_INDEX, MemRefType
from xdsl.ir import Attribute

from loom.dataflow.items import zeros_for
from loom.frontends.ekl import form as F
from loom.errors import LoomError


def accelerated_lets(obj) -> int | None:
    """How many lets of an EKL kernel loaded with ``accelerators=`` run on one (None: not such a kernel). Read by
    its ``offloaded`` count: loom.offload sits above the dataflow layer, which does not import it."""
    count = getattr(type(obj), "offloaded", None)
    return obj.offloaded if isinstance(count, property) else None


def is_ekl_kernel(obj) -> bool:
    from loom.jit.ekl import EklKernel
    from loom.jit.ekl_formats import EklFormatKernel

    return isinstance(obj, (EklKernel, EklFormatKernel))


def _fits(channel: Attribute, param: MemRefType) -> bool:
    if not param.get_shape() and channel == param.element_type:  # a scalar on a scalar channel
        return True
    if not isinstance(channel, MemRefType) or channel.element_type != param.element_type:
        return False
    if channel.get_num_dims() != param.get_num_dims():
        return False
    return all(c == p or DYNAMIC_INDEX in (c, p) for c, p in zip(channel.get_shape(), param.get_shape()))


def ekl_call(kernel, in_types: Sequence[Attribute], out_types: Sequence[Attribute], name: str
             ) -> Callable[..., Any]:
    from loom.frontends.ekl.to_esn import memref_type

    form = getattr(kernel, "form", None) or kernel.kernel.form  # an EklKernel, or one in a number format
    where = f"node @{name}"
    reads = [p for p in form.params if not p.is_output or p.is_inout]
    writes = [p for p in form.params if p.is_output]
    for side, params, types in (("input", reads, in_types), ("output", writes, out_types)):
        if len(params) != len(types):
            listed = ", ".join(p.name for p in params) or "none"
            raise LoomError(f"EKL kernel {form.name} has {len(params)} {'read' if side == 'input' else 'written'} "
                            f"parameter(s) ({listed}) but the node has {len(types)} {side} channel(s)", where=where)
        for k, (p, t) in enumerate(zip(params, types)):
            want = memref_type(p)
            if not _fits(t, want):
                raise LoomError(f"{side} channel {k} carries {t} but EKL kernel {form.name} parameter '{p.name}' "
                                f"is {want}", where=where)
    for k, (p, t) in enumerate(zip(writes, out_types)):
        if not p.is_inout and isinstance(t, MemRefType) and DYNAMIC_INDEX in t.get_shape():  # type: ignore[union-attr]
            raise LoomError(f"output channel {k} carries {t}: the node allocates '{p.name}' for each item, "
                            "which needs a static shape", where=where)
    compile_ = getattr(kernel, "compile", None)
    if compile_ is not None:
        compile_()  # before any thread starts: compile errors name the node early
    positions = {id(p): k for k, p in enumerate(reads)}
    dtypes = {p.name: np.dtype(F.NP_DTYPES[p.dtype]) for p in form.params}
    scalar_out = {p.name for p, t in zip(writes, out_types) if not isinstance(t, MemRefType)}

    def call(*items):
        named: dict[str, np.ndarray] = {}
        for p in reads:
            item = items[positions[id(p)]]
            # the kernel writes an inout& in place (a scalar one as a 0-d array)
            named[p.name] = np.array(item, dtypes[p.name]) if p.is_inout else item
        for p, t in zip(writes, out_types):
            if not p.is_inout:
                named[p.name] = np.zeros((), dtypes[p.name]) if p.name in scalar_out else zeros_for(t, where)
        kernel(**named)
        outs = [named[p.name][()] if p.name in scalar_out else named[p.name] for p in writes]
        return outs[0] if len(outs) == 1 else tuple(outs)

    return call
