"""Wrapping address counters: a stage's address into a circular memory of any number of words, kept modulo the
words as its loops advance, so a memory holds exactly the span of addresses live at once (no rounding to a power
of two, and no divider).

The address is ``sum_j floor((row_j . p + c_j) / d_j) * stride_j`` (an access map's, or a point's own index
with rows the identity), ``p`` a lane's point: its block offset plus each loop's ``scale * counter``. The loops
advance as an odometer, so between two iterations the point moves by one of a few constant steps (loop ``i``
increments, the loops inside it wrap to 0): per step the numerators move by constants. A register holds the
address modulo the words and one per divided index its numerator's remainder; a step adds the quotients'
constant part and each remainder's carry, each wrapped by one compare and subtract.
"""

from __future__ import annotations

import numpy as np

from .verilog_ops import address_bits


def step_deltas(loops, n_dims: int) -> list:
    """Per loop ``i`` of ``loops`` (innermost first): how the point moves when ``i`` increments and the loops
    inside it wrap from their last value to 0."""
    deltas = []
    for i, lp in enumerate(loops):
        d = np.zeros(n_dims, np.int64)
        d[lp.dim] += lp.scale
        for inner in loops[:i]:
            d[inner.dim] -= (inner.extent - 1) * inner.scale
        deltas.append(d)
    return deltas


def address_at(rows, offs, divs, strides, point) -> int:
    """The address of ``point`` (a Python reference of the hardware's value)."""
    return sum(((int(np.dot(r, point)) + c) // d) * s for r, c, d, s in zip(rows, offs, divs, strides))


class WrappingAddress:
    """The registers of one lane's address modulo ``words``, advancing with ``stage``'s loops (``loops``,
    innermost first; ``at_last(loop)`` the condition that a loop is at its last value) on ``advance``."""

    def __init__(self, lines: list, stem: str, loops, at_last, advance: str, rows, offs, divs, strides,
                 start_point, words: int):
        self.lines, self.name, self.words = lines, stem, words
        rows = [np.asarray(r, np.int64) for r in rows]
        point = np.asarray(start_point, np.int64)
        bits = address_bits(words)
        wide = address_bits(2 * words)  # a sum before its wrap
        L = lines
        L.append(f"  logic [{bits - 1}:0] {stem};  // an address modulo {words}, advancing with its loops")
        deltas = step_deltas(loops, len(point))
        divided = [j for j, d in enumerate(divs) if d != 1]
        start = address_at(rows, offs, divs, strides, point) % words
        rems = {j: (int(np.dot(rows[j], point)) + offs[j]) % divs[j] for j in divided}

        def pick(values, width):
            """The constant of the step taken: loop i's when the loops inside it are at their last value."""
            expr = f"{width}'d{values[-1]}"
            for i in reversed(range(len(loops) - 1)):
                expr = f"({at_last(loops[i])} ? {expr} : {width}'d{values[i]})"
            return expr

        quotient = [sum((int(np.dot(rows[j], d)) // divs[j]) * strides[j] for j in range(len(rows))) % words
                    for d in deltas]
        L.append(f"  wire [{wide - 1}:0] {stem}_k = {wide}'({stem}) + {pick(quotient, wide) if loops else 0};")
        acc = self._wrap(f"{stem}_k", wide)
        updates = []
        for j in divided:
            d, rb = divs[j], address_bits(2 * divs[j])
            r = f"{stem}_r{j}"
            L.append(f"  logic [{rb - 1}:0] {r};")
            moved = [int(np.dot(rows[j], dl)) % d for dl in deltas]
            s = f"{stem}_s{j}"
            L.append(f"  wire [{rb - 1}:0] {s} = {r} + {pick(moved, rb) if loops else 0};")
            carry = f"({s} >= {rb}'d{d})"
            updates.append(f" {r} <= {carry} ? {rb}'({s} - {rb}'d{d}) : {s};")
            plus = f"{stem}_c{j}"
            L.append(f"  wire [{wide - 1}:0] {plus} = {wide}'({acc}) + ({carry} ? {wide}'d{strides[j] % words} : "
                     f"{wide}'d0);")
            acc = self._wrap(plus, wide)
        resets = f" {stem} <= {bits}'d{start};" + "".join(f" {stem}_r{j} <= 'd{rems[j]};" for j in divided)
        L.append(f"  always_ff @(posedge clk) if (rst) begin{resets} end else if ({advance}) begin "
                 f"{stem} <= {bits}'({acc});" + "".join(updates) + " end")

    def _wrap(self, value: str, wide: int) -> str:
        """``value`` (below twice the words) modulo the words, as a new wire."""
        w = f"{value}_w"
        self.lines.append(f"  wire [{wide - 1}:0] {w} = ({value} >= {wide}'d{self.words}) ? "
                          f"{wide}'({value} - {wide}'d{self.words}) : {value};")
        return w


def counter_bits(words: int, divs) -> int:
    """Flip-flop bits of one wrapping address: the address and a remainder per divided index."""
    return address_bits(words) + sum(address_bits(2 * d) for d in divs if d != 1)


__all__ = ["WrappingAddress", "address_at", "counter_bits", "step_deltas"]
