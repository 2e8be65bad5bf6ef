"""Last-read cycle of every buffer value from a read port, in closed form per buffer dimension.

A "projection" port reads buffer dim j at ``floor((a_j * p_k + c_j) / d_j)`` of one
consumer loop k (a_j > 0, each loop feeding at most one dim) or at a constant;
loops it does not use (a gemm's other matrix index, a reduction's other taps)
are free. Its cycle ``T + sum_k s_k p_k`` (strides >= 0, p_0 divided by the
lanes) is then largest, for a value v, at the largest p_k mapping to v_j in each
used loop and the last iteration of each free loop, so the last read is a sum
of one 1-D term per buffer dimension: a broadcast over the values the port
touches, never a sweep of its (possibly far larger) iteration domain. A gemm
port of 2048 x 2048 points (x, y) reading ``hw_b[x, 5]`` costs 2048 values.
Other ports return None (the caller sweeps them).
"""

from __future__ import annotations

import numpy as np

NEVER = np.iinfo(np.int64).min // 16  # "not read by this port" (a sum of a few stays far below any cycle)


def projection_last_read(port, extents, cache: dict | None = None) -> tuple | None:
    """(slices, cycles) of the buffer values ``port`` reads and their last read, or None if not a projection.

    ``extents`` is the buffer's (x first); the result indexes an array of shape ``extents[::-1]``.
    ``cycles`` holds ``NEVER`` where no point of the port reads the value (None: the port reads nothing).
    Ports that differ only in their constant indices (a fully unrolled reduction's taps) share ``cycles``
    through ``cache``."""
    rows, offs = port.access
    if cache is not None:
        key = _key(port, extents)
        hit = cache.get(key)
        if hit is not None:
            if hit is False:
                return None
            return _slices(rows, offs, port.divs(), extents, hit[0]), hit[1]
    out = _compute(port, extents)
    if cache is not None and (out is None or out[1] is not None):
        cache[key] = False if out is None else (_template(rows, out[0]), out[1])
    return out


def _key(port, extents):
    rows, offs = port.access
    s = port.schedule
    varying = tuple(c if any(row) else None for row, c in zip(rows, offs))
    return (tuple(map(tuple, rows)), varying, port.divs(), tuple(port.extents), s.offset, tuple(s.strides), s.lanes,
            s.floors, tuple(extents))


def _template(rows, slices):
    """The slices with the constant-index axes (which vary between ports sharing a key) left open."""
    return tuple(None if not any(rows[j]) else sl for sl, j in zip(slices, reversed(range(len(rows)))))


def _slices(rows, offs, divs, extents, template):
    out = []
    for sl, j in zip(template, reversed(range(len(rows)))):
        if sl is None:
            v = offs[j] // divs[j]
            if not 0 <= v < extents[j]:
                return None
            sl = slice(v, v + 1)
        out.append(sl)
    return tuple(out)


def _compute(port, extents):
    rows, offs = port.access
    divs = port.divs()
    sched = port.schedule
    if sched.floors:
        return None  # rows in blocks (or coarse loops): the caller sweeps the port
    used = {}
    for j, row in enumerate(rows):
        nz = [(k, a) for k, a in enumerate(row) if a]
        if len(nz) > 1 or (nz and (nz[0][1] < 0 or nz[0][0] in used)):
            return None
        if nz:
            used[nz[0][0]] = j
    base = sched.offset
    for k, e in enumerate(port.extents):  # free loops: their last iteration
        if k not in used and sched.strides[k]:
            base += sched.strides[k] * _lane_index(e - 1, k, sched.lanes)
    per_dim, slices, holes = [], [], False
    for j in reversed(range(len(rows))):  # array axes: the last buffer dim first
        row, c, d, e_buf = rows[j], offs[j], divs[j], extents[j]
        k = next((k for k, a in enumerate(row) if a), None)
        if k is None:  # a constant index: the port touches one slice
            v = c // d
            if not 0 <= v < e_buf:
                return (), None  # outside the buffer: reads nothing (bounds inference keeps this from happening)
            slices.append(slice(v, v + 1))
            per_dim.append(np.zeros(1, np.int64))
            continue
        a, e = row[k], port.extents[k]
        v = np.arange(e_buf, dtype=np.int64)
        p = np.minimum((d * (v + 1) - c - 1) // a, e - 1)  # the largest p with floor((a p + c) / d) <= v
        ok = (p >= 0) & ((a * p + c) // d == v)
        contrib = sched.strides[k] * _lane_index(p, k, sched.lanes)
        read = np.flatnonzero(ok)
        if read.size == 0:
            return (), None
        step = int(read[1] - read[0]) if read.size > 1 else 1
        if (read == read[0] + step * np.arange(read.size)).all():  # a strided run: touch only those values
            slices.append(slice(int(read[0]), int(read[-1]) + 1, step))
            per_dim.append(contrib[read])
        else:
            slices.append(slice(None))
            per_dim.append(np.where(ok, contrib, NEVER))
            holes = True
    cycles = np.asarray(base, np.int64)
    for axis, contrib in enumerate(per_dim):
        shape = [1] * len(per_dim)
        shape[axis] = contrib.size
        cycles = cycles + contrib.reshape(shape)
    if holes:
        cycles = np.where(cycles < NEVER // 2, NEVER, cycles)  # any dim unread: not read at all
    return tuple(slices), cycles


def _lane_index(p, k, lanes):
    return p // lanes if (k == 0 and lanes > 1) else p
