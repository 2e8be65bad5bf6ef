"""Random arguments for a kernel from its signature (``loom run FILE:kernel --dims M=64``)."""

from __future__ import annotations

import numpy as np

from loom.errors import LoomError


def random_arguments(kernel, values: dict[str, int], rng: np.random.Generator) -> list:
    """One argument per parameter: arrays shaped from static dims and ``values`` for named
    dims; scalars from ``values`` by parameter name, else random (index scalars default to 0,
    since they are usually positions)."""
    args = []
    for param in kernel.signature.params:
        dtype = param.element.dtype
        if param.kind == "scalar":
            if param.name in values:
                args.append(dtype.type(values[param.name]))
            elif param.element.name.lower() == "index":
                args.append(0)
            else:
                args.append(random_array(rng, dtype, ())[()])
            continue
        shape = []
        for axis, dim in enumerate(param.dims):
            if isinstance(dim, int):
                shape.append(dim)
            elif dim in values:
                shape.append(values[dim])
            else:
                raise LoomError(f"parameter '{param.name}' axis {axis} has dynamic size '{dim}': "
                                f"give it with --dims {dim}=SIZE", where=kernel.name)
        args.append(random_array(rng, dtype, tuple(shape)))
    return args


def random_array(rng: np.random.Generator, dtype: np.dtype, shape: tuple) -> np.ndarray:
    if dtype == np.bool_:
        return rng.integers(0, 2, shape).astype(np.bool_)
    if np.issubdtype(dtype, np.floating):
        return rng.standard_normal(shape).astype(dtype)
    return rng.integers(-100, 100, shape).astype(dtype)
