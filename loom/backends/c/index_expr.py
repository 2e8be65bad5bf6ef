"""Folding arithmetic on index expressions that are either ints or C text.

Sizes, strides and offsets of memref views are known statically more often
than not; keeping them as Python ints until they meet a runtime value lets the
generated C index with literal constants, as hand-written C would.
"""

from __future__ import annotations

Ix = int | str  # a known integer, or a C expression of type intptr_t


def ix_add(a: Ix, b: Ix) -> Ix:
    if isinstance(a, int) and isinstance(b, int):
        return a + b
    if a == 0:
        return b
    if b == 0:
        return a
    return f"({a} + {b})"


def ix_mul(a: Ix, b: Ix) -> Ix:
    if isinstance(a, int) and isinstance(b, int):
        return a * b
    if a == 0 or b == 0:
        return 0
    if a == 1:
        return b
    if b == 1:
        return a
    return f"({a} * {b})"


def linear_index(offset: Ix, indices: list[Ix], strides: list[Ix]) -> Ix:
    total: Ix = offset
    for index, stride in zip(indices, strides):
        total = ix_add(total, ix_mul(index, stride))
    return total
