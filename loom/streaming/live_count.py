"""The most values live in any cycle, from their write cycles and last-read cycles, without sorting them.

Values live from their write (``starts``, included) to their last read (``ends``, excluded): after cycle t,
live(t) = #starts <= t - #ends <= t, which only grows at writes. The cycles are counted into buckets of a
power-of-two width holding about 8 values each (``bincount``, linear time): the count at each bucket's end is exact, and the count inside
a bucket is at most its writes up to the bucket's end minus the reads before it starts. Only the buckets
whose bound beats the best exact count are resolved exactly, from their own events; when that is a large
share of the events, sorting them all is as cheap.
"""

from __future__ import annotations

import numpy as np


def sorted_unique(values: np.ndarray) -> np.ndarray:
    """The distinct values, ascending, by one sort (numpy 2's ``np.unique`` hashes: about 50x slower on a few
    million cycle numbers)."""
    s = np.sort(np.asarray(values).ravel())
    if s.size < 2:
        return s
    keep = np.empty(s.size, bool)
    keep[0] = True
    np.not_equal(s[1:], s[:-1], out=keep[1:])
    return s[keep]


def max_live(starts: np.ndarray, ends: np.ndarray) -> int:
    """max over cycles t of #(starts <= t) - #(ends <= t), for values with start <= end (start == end: a value
    never held, which counts for no cycle)."""
    if starts.size == 0:
        return 0
    if ends.min() > starts.max():  # every value is written before any dies (a matrix kept whole)
        return int(starts.size)
    if (ends == starts).all():
        return 0
    if _is_ascending(starts) and _is_ascending(ends):  # a stream in order: exact at once, no sort, no buckets
        return _by_sorting(starts, ends)
    t0 = int(starts.min())
    span = int(ends.max()) - t0 + 1
    shift = max(0, (span // max(1, starts.size // 8)).bit_length())  # ~8 values a bucket, a power-of-two width
    width = 1 << shift
    nb = ((span - 1) >> shift) + 1
    bs, be = (starts - t0) >> shift, (ends - t0) >> shift
    cs, ce = np.bincount(bs, minlength=nb), np.bincount(be, minlength=nb)
    w_end, d_end = np.cumsum(cs), np.cumsum(ce)
    best = int((w_end - d_end).max())
    d_before = d_end - ce
    cand = np.flatnonzero(w_end - d_before > best)
    if cand.size == 0:
        return best
    marked = np.zeros(nb, bool)
    marked[cand] = True
    in_s, in_e = marked[bs], marked[be]
    if int(in_s.sum()) + int(in_e.sum()) > starts.size // 4:
        return max(best, _by_sorting(starts, ends))
    s_c, e_c = np.sort(starts[in_s]), np.sort(ends[in_e])
    b = (s_c - t0) // width  # every start of a candidate bucket is here
    lo = t0 + b * width  # the bucket's first cycle
    w_prior = w_end[b] - cs[b]  # writes in earlier buckets
    written = w_prior + np.searchsorted(s_c, s_c, "right") - np.searchsorted(s_c, lo, "left")
    read = d_before[b] + np.searchsorted(e_c, s_c, "right") - np.searchsorted(e_c, lo, "left")
    return max(best, int((written - read).max()))


def _by_sorting(starts, ends) -> int:
    starts, ends = _ascending(starts), _ascending(ends)
    at = np.flatnonzero(np.append(starts[1:] != starts[:-1], True))
    return int((at + 1 - np.searchsorted(ends, starts[at], "right")).max())


def _ascending(values: np.ndarray) -> np.ndarray:
    """``values`` sorted; a stream's write and last-read cycles usually come in order already (one pass to see)."""
    return values if _is_ascending(values) else np.sort(values)


def _is_ascending(values: np.ndarray) -> bool:
    return values.size < 2 or bool(np.all(values[1:] >= values[:-1]))


def live_address_span(starts: np.ndarray, ends: np.ndarray, addresses: np.ndarray) -> int:
    """The widest range of addresses (max - min + 1) in memory at once: a value is held from its write (start)
    until its last read (end, excluded), and every write lands in memory in its cycle, held or not. A circular
    memory of at least this many words, indexed by address mod words, never overwrites a value before its last
    read: two values it holds at once differ by less than the span, so they fall on different words.

    The held set only grows at a write cycle, so the span is checked at the distinct write cycles: value i is in
    memory at the write cycles from its own to the last one before max(end, start + 1). Each value's range of
    write cycles is a max (and a min) update over an interval, answered for every cycle at once by a sparse table
    run backwards (numpy, O(n log n))."""
    starts, ends, addresses = (np.asarray(v).ravel() for v in (starts, ends, addresses))
    if starts.size == 0:
        return 0
    cycles, lo = _ranks(starts)
    hi = _search(cycles, np.maximum(ends, starts + 1))  # one past the last write cycle held
    a = addresses.astype(np.int64)
    level = _floor_log2(hi - lo)
    by_level = np.argsort(level, kind="stable")  # small integers: a radix sort
    bounds = np.searchsorted(level[by_level], np.arange(int(level.max()) + 2), "left")
    groups = [by_level[bounds[j]:bounds[j + 1]] for j in range(bounds.size - 1)]
    return int((_interval_max(lo, hi, a, groups, cycles.size) +
                _interval_max(lo, hi, -a, groups, cycles.size)).max()) + 1


def _ranks(values: np.ndarray) -> tuple:
    """The distinct values ascending, and each value's position among them (one sort)."""
    order = None if _is_ascending(values) else np.argsort(values)
    s = values if order is None else values[order]
    new = np.empty(s.size, bool)
    new[0] = True
    np.not_equal(s[1:], s[:-1], out=new[1:])
    rank = np.cumsum(new) - 1
    if order is not None:
        rank[order] = rank.copy()
    return s[new], rank


def _floor_log2(lengths: np.ndarray) -> np.ndarray:
    """floor(log2 L) of positive integers below 2^53 (exact through the float exponent)."""
    return np.frexp(lengths.astype(np.float64))[1].astype(np.int64) - 1


def _search(sorted_values: np.ndarray, queries: np.ndarray) -> np.ndarray:
    """``np.searchsorted(sorted_values, queries, "left")``, the queries taken in ascending order (random queries
    into a large array miss the cache: sorting them first is several times faster)."""
    if _is_ascending(queries):
        return np.searchsorted(sorted_values, queries, "left")
    order = np.argsort(queries)
    found = np.empty(queries.size, np.int64)
    found[order] = np.searchsorted(sorted_values, queries[order], "left")
    return found


def _interval_max(lo: np.ndarray, hi: np.ndarray, values: np.ndarray, groups: list, n: int) -> np.ndarray:
    """Per position k < n, the max of ``values[i]`` over the intervals [lo_i, hi_i) holding k (each non-empty;
    every position is held by one; ``groups[j]``: the intervals of length 2^j to 2^(j+1) - 1). An interval of length
    L covers two blocks of 2^floor(log2 L) positions, recorded at that level; each level then passes its blocks
    down to its two halves."""
    low = np.iinfo(np.int64).min
    tables = []
    for j, pick in enumerate(groups):
        t = np.full(n - (1 << j) + 1, low, np.int64)
        np.maximum.at(t, lo[pick], values[pick])
        np.maximum.at(t, hi[pick] - (1 << j), values[pick])
        tables.append(t)
    for j in range(len(tables) - 1, 0, -1):  # a block of 2^j positions is its two halves of 2^(j-1)
        below, half = tables[j - 1], 1 << (j - 1)
        np.maximum(below[:tables[j].size], tables[j], out=below[:tables[j].size])
        np.maximum(below[half:half + tables[j].size], tables[j], out=below[half:half + tables[j].size])
    return tables[0]
