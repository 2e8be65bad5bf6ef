"""Shape checks of a compiled driver's arrays, derived from the matched linalg op's indexing maps.

The driver's C reads each loop extent from one operand (``memref.dim``) and
indexes every operand with it, so arrays whose shapes disagree would be read or
written out of bounds. Before C runs, for each operand axis subscripted by the
linalg op's indexing map:

- an axis indexed by a loop dim alone (``A[m, k]``: axis 1 is ``k``) fixes that
  dim's extent; every axis indexed by the same dim alone must have that size
  (matmul: ``A.dim1 == B.dim0``), the error names both operands and axes;
- an axis indexed by a combination (conv: ``I[.., oh * s + kh, ..]``) must
  contain the largest index it is read at, ``s * (OH - 1) + (KH - 1)``.

An output must not share memory with another operand: the driver reads the
inputs tile by tile while it writes output tiles back, so an aliased output gets
a result that depends on the tiling and flow (not the kernel's sequential one).

Count, dtype, rank and layout are checked by the C function itself
(``loom.backends.c.runtime``), as are names recorded in the IR (``loom.dims``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from loom.errors import LoomError

Subscript = tuple[dict[str, int], int]  # {loop dim: coefficient}, constant


def check_driver_arrays(func_name: str, operand_names: Sequence[str],
                        subscripts: Sequence[Sequence[Subscript]], arrays: Sequence[object], *,
                        outputs: Sequence[int] = ()) -> None:
    """Raise a LoomError when the arrays cannot be the operands of one problem (see the module docstring)."""
    where = f"driver @{func_name}"
    if len(arrays) != len(subscripts):
        raise LoomError(f"the driver takes {len(subscripts)} arrays ({', '.join(operand_names)}), "
                        f"got {len(arrays)}", where=where)
    for name, subs, arr in zip(operand_names, subscripts, arrays):
        if not isinstance(arr, np.ndarray):
            raise LoomError(f"operand {name} must be a numpy array, got {type(arr).__name__}", where=where)
        if arr.ndim != len(subs):
            raise LoomError(f"operand {name} must have rank {len(subs)}, got shape {arr.shape}", where=where)
    for out in outputs:
        for k, arr in enumerate(arrays):
            if k != out and arr.size and arrays[out].size and np.may_share_memory(arrays[out], arr):
                raise LoomError(f"output {operand_names[out]} shares memory with operand {operand_names[k]}; "
                                "the driver writes output tiles back while it reads the inputs tile by tile, "
                                "so pass distinct arrays", where=where)
    extent: dict[str, tuple[int, str, int]] = {}  # loop dim -> (size, operand, axis) that fixed it
    for name, subs, arr in zip(operand_names, subscripts, arrays):
        for axis, (terms, const) in enumerate(subs):
            dim = _alone(terms, const)
            if dim is None:
                continue
            size = int(arr.shape[axis])
            if dim not in extent:
                extent[dim] = (size, name, axis)
            elif extent[dim][0] != size:
                first, other, other_axis = extent[dim]
                raise LoomError(f"operand {name} dim {axis} has size {size} but operand {other} dim {other_axis} "
                                f"has size {first}; both are loop dim {dim} and must be equal", where=where)
    for name, subs, arr in zip(operand_names, subscripts, arrays):
        for axis, (terms, const) in enumerate(subs):
            if _alone(terms, const) is not None or any(d not in extent for d in terms):
                continue
            if any(extent[d][0] == 0 for d in terms):
                continue  # empty iteration space: nothing is read
            low = const + sum(c * (extent[d][0] - 1) for d, c in terms.items() if c < 0)
            high = const + sum(c * (extent[d][0] - 1) for d, c in terms.items() if c > 0)
            size = int(arr.shape[axis])
            if low < 0 or high >= size:
                formula = " + ".join(f"{c}*{d}" for d, c in terms.items()) + (f" + {const}" if const else "")
                sizes = ", ".join(f"{d}={extent[d][0]}" for d in terms)
                raise LoomError(f"operand {name} dim {axis} has size {size} but is indexed by {formula} up to "
                                f"{high} (with {sizes}); it needs size {high + 1}", where=where)


def _alone(terms: dict[str, int], const: int) -> str | None:
    """The loop dim an axis is indexed by alone (coefficient 1, no constant), if any."""
    if len(terms) == 1 and not const and next(iter(terms.values())) == 1:
        return next(iter(terms))
    return None


__all__ = ["check_driver_arrays"]
