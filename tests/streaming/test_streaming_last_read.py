"""The closed-form last reads (``last_read.py``) and the write-cycle capacity sweep against brute force:
every operation of every read port enumerated, and the live values counted cycle by cycle."""

import numpy as np
import pytest

from loom.streaming import build_design
from loom.streaming.last_read import NEVER, projection_last_read
from loom.streaming.scheduler import last_reads, live_capacity, port_indices

from tests.streaming.streaming_apps import example

DESIGNS = [  # app, build arguments, design size
    ("gemm", dict(tile=(12, 10)), (12, 10)),
    ("gemm", dict(tile=(12, 10), k_unroll=2), (12, 10)),
    ("conv_layer", dict(tile=(9, 7), ci_unroll=1), (9, 7, 4)),
    ("upsample", dict(tile=(16, 12)), (16, 12)),
    ("gaussian_pyramid", dict(tile=(16, 16)), (16, 16)),
    ("harris", dict(tile=(14, 9), rate=2), (14, 9)),
    ("cascade", dict(tile=(20, 12)), (20, 12)),
    ("max_pool", dict(tile=(8, 6)), (8, 6)),
]


def _design(name, args, size):
    out, _ = example(name).build("accel", **args)
    return build_design(out, size)


@pytest.mark.parametrize("name,args,size", DESIGNS, ids=[f"{d[0]}-{d[1]}" for d in DESIGNS])
def test_projection_last_reads_equal_every_operation_enumerated(name, args, size):
    d = _design(name, args, size)
    checked = 0
    for b in list(d.buffers.values()):
        shape = tuple(b.extents[::-1])
        for p in b.read_ports:
            fast = projection_last_read(p, b.extents)
            if fast is None:
                continue
            want = np.full(shape, NEVER, np.int64)
            idx, t = port_indices(p)
            flat = np.ravel_multi_index(tuple(i.ravel() for i in reversed(idx)), shape)
            np.maximum.at(want.reshape(-1), flat, t.ravel())
            got = np.full(shape, NEVER, np.int64)
            slices, cycles = fast
            if cycles is not None:
                got[slices] = cycles
            np.testing.assert_array_equal(got, want, err_msg=f"{b.name} {p.name}")
            checked += 1
    assert checked >= 3


@pytest.mark.parametrize("name,args,size", DESIGNS, ids=[f"{d[0]}-{d[1]}" for d in DESIGNS])
def test_capacity_is_the_most_values_live_in_any_cycle(name, args, size):
    d = _design(name, args, size)
    for b in d.buffers.values():
        tw, last = last_reads(b)
        held = last > tw
        per_cycle = np.zeros(int(last.max()) + 2, np.int64)  # +1 on the write cycle, -1 on the last read
        np.add.at(per_cycle, tw[held], 1)
        np.add.at(per_cycle, last[held], -1)
        assert live_capacity(b) == max(int(np.cumsum(per_cycle).max()), 0), b.name


@pytest.mark.parametrize("name,args,size", [
    ("gemm", dict(tile=(12, 10), k_unroll=1), (12, 10)),
    ("gemm", dict(tile=(12, 10), k_unroll=4), (12, 10)),
    ("conv_layer", dict(tile=(9, 7), ci_unroll=1), (9, 7, 4)),
])
def test_accumulator_capacity_in_closed_form_equals_the_sweep(name, args, size):
    from loom.streaming.scheduler import _accumulator_capacity_closed_form, accumulator_times
    d = _design(name, args, size)
    for b in d.accumulators.values():
        tw, tr = accumulator_times(b)
        per_cycle = np.zeros(int(tr.max()) + 2, np.int64)
        np.add.at(per_cycle, tw, 1)  # a sum is held from its write until it is read back
        np.add.at(per_cycle, tr, -1)
        swept = int(np.cumsum(per_cycle).max())
        assert _accumulator_capacity_closed_form(b) == swept == b.capacity


@pytest.mark.parametrize("in_order", [False, True])  # True: a stream's cycles in order (no sort, no buckets)
@pytest.mark.parametrize("seed", range(6))
def test_max_live_equals_a_count_in_every_cycle(seed, in_order):
    from loom.streaming.live_count import max_live
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 400))
    spread = int(rng.choice([5, 50, 5000, 10 ** 7]))  # dense to sparse cycles; many equal cycles when dense
    starts = rng.integers(0, spread, n)
    ends = starts + 1 + rng.integers(0, max(1, spread // int(rng.choice([1, 10, 1000]))), n)
    if in_order:  # sorting both keeps each start at or before its end
        starts, ends = np.sort(starts), np.sort(ends)
    cycles = np.unique(np.concatenate([starts, ends]))
    want = max(int(((starts <= t) & (ends > t)).sum()) for t in cycles)
    assert max_live(starts, ends) == want


def test_max_live_ignores_values_never_held():
    from loom.streaming.live_count import max_live
    starts = np.array([0, 1, 2, 2, 5, 9])
    ends = np.array([3, 1, 2, 6, 5, 9])  # only [0, 3) and [2, 6) are held; they overlap in cycle 2
    assert max_live(starts, ends) == 2
    assert max_live(starts[[1, 2, 4]], ends[[1, 2, 4]]) == 0


@pytest.mark.parametrize("size, high", [(0, 5), (1, 5), (2, 2), (1000, 50), (100000, 1 << 40)])
def test_sorted_unique_equals_numpy_unique(size, high):
    from loom.streaming.live_count import sorted_unique

    values = np.random.default_rng(size).integers(-high, high, size)
    np.testing.assert_array_equal(sorted_unique(values), np.unique(values))
