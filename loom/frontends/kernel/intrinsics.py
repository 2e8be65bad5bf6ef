"""Kernel-language builtins recognised by the tracer: ``parallel``, ``alloc``, ``alloca``, ``cast``.

In a kernel they are markers: the tracer emits IR when it sees them (it recognises these very objects). Called in
plain Python (a kernel's own function, ``kernel.__wrapped__``, run as the reference for its numbers) they do what
the kernel does, on numpy: ``parallel`` iterates its index space in order (one of the orders the parallel loop may
run in), ``alloc``/``alloca`` return a zero-filled array of the element type (the kernel's buffers are not
initialised: a kernel that reads one before writing it has no reference), ``cast(x, T)`` is ``T(x)``.
"""

from __future__ import annotations

import itertools

import numpy as np

from loom.errors import LoomError


def _scalar_type(t, what: str):
    from loom.frontends.kernel.kernel_types import ScalarType

    if not isinstance(t, ScalarType):
        raise LoomError(f"{what}: the type must be a loom scalar type (F32, I32, Index, ...), got {t!r}")
    return t


def parallel(*args):
    """for i, j in parallel((lb0, lb1), (ub0, ub1)[, (s0, s1)]) or parallel(ub0, ub1): an scf.parallel loop."""
    if args and all(isinstance(a, tuple) for a in args) and len(args) <= 3:
        lbs, ubs = (tuple(0 for _ in args[0]), args[0]) if len(args) == 1 else (args[0], args[1])
        steps = args[2] if len(args) == 3 else tuple(1 for _ in ubs)
    elif args and not any(isinstance(a, tuple) for a in args):
        lbs, ubs, steps = tuple(0 for _ in args), args, tuple(1 for _ in args)
    else:
        raise LoomError("use parallel(ub0, ub1, ...) or parallel((lb0, ...), (ub0, ...)[, (step0, ...)])")
    if not (len(lbs) == len(ubs) == len(steps)) or not ubs:
        raise LoomError("parallel(): lower bounds, upper bounds and steps must have the same length")
    ranges = [range(int(lo), int(hi), int(s)) for lo, hi, s in zip(lbs, ubs, steps)]
    if len(ranges) == 1:
        return iter(ranges[0])
    return itertools.product(*ranges)


def alloc(shape, t):
    """alloc((d0, d1), T): memref.alloc, freed (memref.dealloc) at the end of its block."""
    t = _scalar_type(t, "alloc(shape, T)")
    return np.zeros(tuple(int(d) for d in shape) if isinstance(shape, (tuple, list)) else (int(shape),), t.dtype)


def alloca(shape, t):
    """alloca((d0, d1), T): memref.alloca (stack), valid until the function returns."""
    t = _scalar_type(t, "alloca(shape, T)")
    return np.zeros(tuple(int(d) for d in shape) if isinstance(shape, (tuple, list)) else (int(shape),), t.dtype)


def cast(x, t):
    """cast(x, T): explicit scalar conversion, same as T(x)."""
    return _scalar_type(t, "cast(x, T)")(x)
