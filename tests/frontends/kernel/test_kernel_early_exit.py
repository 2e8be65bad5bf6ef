"""A ``for`` loop that breaks (or returns) leaves at once: it is an scf.while whose condition tests the break
flag, not an scf.for that counts out the rest of its range doing nothing (a break at i=3 of range(10**9) took as
long as the whole range). References: each kernel run as plain Python (``__wrapped__``), upstream mlir-opt and
mlir-runner."""

import numpy as np
import pytest

import tests.frontends.kernel.kernel_exit_kernels as E
from loom.oracle import mlir
from tests.frontends.kernel.kernel_frontend_helpers import ops_named, upstream_verify

RNG = np.random.default_rng(5)
HUGE = 2**62  # no loop runs this range out
X16 = np.arange(16, dtype=np.int64)
# (kernel, its loops that break or return, its other for loops)
BREAKING = [(E.count_until, 1, 0), (E.find_return, 1, 0), (E.nested_find, 1, 1), (E.find2, 2, 0),
            (E.down_break, 1, 0), (E.stepped_break, 1, 0), (E.affine_break, 1, 0), (E.break_and_continue, 1, 0),
            (E.once, 1, 0), (E.enumerate_break, 1, 0), (E.first_negative_per_row, 1, 0)]


@pytest.mark.parametrize("kernel, leaving, others", BREAKING, ids=[k.name for k, _, _ in BREAKING])
def test_breaking_for_loops_are_while_loops_testing_the_flag(kernel, leaving, others):
    m = kernel.module
    assert len(ops_named(m, "scf.for")) + len(ops_named(m, "affine.for")) == others
    loops = ops_named(m, "scf.while")
    assert len(loops) == leaving
    for w in loops:  # the condition reads the flag: `k < ub and not brk`
        cond = w.before_region.block.last_op
        assert cond.name == "scf.condition"
        assert cond.condition.owner.name == "arith.andi", kernel.name
    upstream_verify(m)


def test_a_loop_that_only_continues_stays_a_for_loop():
    # break_and_continue's loop breaks; a kernel whose loop only continues keeps its scf.for (nothing to stop)
    from tests.frontends.kernel import kernel_user_kernels as U
    assert ops_named(U.sum_skipping_negatives_until_zero.module, "scf.while")  # it breaks too
    m = E.until_zero.module  # a while loop: its own condition and the flag
    assert len(ops_named(m, "scf.while")) == 1 and not ops_named(m, "scf.for")


@pytest.mark.sanitize
def test_a_break_at_i_3_of_a_huge_range_returns_at_once():
    y = np.zeros(16, np.int64)
    assert E.count_until(X16, y, HUGE, np.int64(3)) == 3
    np.testing.assert_array_equal(y, [1, 1, 1] + [0] * 13)
    y[:] = 0
    assert E.find_return(X16, y, HUGE, np.int64(3)) == 3
    np.testing.assert_array_equal(y, [1, 1, 1, 1] + [0] * 12)
    a = np.tile(X16, (3, 1))
    assert E.nested_find(a, HUGE, np.int64(3)) == 3 * (0 + 1 + 2)


@pytest.mark.mlir
def test_upstream_runner_leaves_a_huge_range_at_once(monkeypatch):
    monkeypatch.setenv("LOOM_MLIR_TIMEOUT", "60")
    ran = mlir.run(E.count_until.module, "count_until", [X16, np.zeros(16, np.int64), HUGE, np.int64(3)])
    assert ran.results[0] == 3
    np.testing.assert_array_equal(ran.memrefs[1], [1, 1, 1] + [0] * 13)
    ran = mlir.run(E.find_return.module, "find_return", [X16, np.zeros(16, np.int64), HUGE, np.int64(5)])
    assert ran.results[0] == 5


def _py(kernel, *args):
    return kernel.__wrapped__(*args)


@pytest.mark.sanitize
@pytest.mark.parametrize("trial", range(6))
def test_breaking_loops_match_python(trial):
    x = RNG.integers(-2, 6, 9).astype(np.int32)
    for t in (x[trial], 99):
        assert E.down_break(x, np.int32(t)) == _py(E.down_break, x, t)
    for lo, hi, s in ((0, 9, 1), (8, -1, -1), (7, 0, -3), (1, 9, 2), (5, 5, 1), (0, 9, 4)):
        assert E.stepped_break(x, lo, hi, s, np.int32(3)) == _py(E.stepped_break, x, lo, hi, s, 3)
    y, want = np.zeros(9, np.int32), np.zeros(9, np.int32)
    assert E.break_and_continue(x, y) == _py(E.break_and_continue, x, want)
    np.testing.assert_array_equal(y, want)
    assert E.once(x) == x[0] and E.once(x[:0].copy()) == 0
    assert E.until_zero(x) == _py(E.until_zero, x)
    a = RNG.integers(0, 12, (3, 4)).astype(np.int32)
    for t in (a[trial % 3, trial % 4], 50):
        assert tuple(E.find2(a, np.int32(t))) == _py(E.find2, a, t)
    f = RNG.normal(0, 1, 8).astype(np.float32)
    fy, fwant = np.zeros(8, np.float32), np.zeros(8, np.float32)
    E.affine_break(f, fy)
    _py(E.affine_break, f, fwant)
    np.testing.assert_array_equal(fy, fwant)
    g = (RNG.random(6) * 14).astype(np.float32)
    k, s = E.enumerate_break(g)
    wk, ws = _py(E.enumerate_break, g)
    assert k == wk and s == np.float32(ws)
    b = RNG.integers(-1, 5, (4, 5)).astype(np.int32)
    out = np.zeros(4, np.int64)
    E.first_negative_per_row(b, out)
    want_out = [next((j for j in range(5) if row[j] < 0), 5) for row in b]  # parallel() has no Python meaning
    np.testing.assert_array_equal(out, want_out)


@pytest.mark.mlir
def test_upstream_runner_agrees_on_steps_and_tuples():
    x = np.array([3, 1, 4, 1, 5, 9, 2, 6], np.int32)
    for lo, hi, s in ((7, -1, -2), (0, 8, 3)):
        ran = mlir.run(E.stepped_break.module, "stepped_break", [x, lo, hi, s, np.int32(4)])
        assert ran.results[0] == _py(E.stepped_break, x, lo, hi, s, 4)
    a = np.arange(12, dtype=np.int32).reshape(3, 4)
    assert [int(r) for r in mlir.run(E.find2.module, "find2", [a, np.int32(6)]).results] == [1, 2]
    y, want = np.zeros(8, np.int32), np.zeros(8, np.int32)
    ran = mlir.run(E.break_and_continue.module, "break_and_continue", [np.array([2, 3, 4, 0, 6], np.int32), y[:5]])
    assert ran.results[0] == _py(E.break_and_continue, np.array([2, 3, 4, 0, 6], np.int32), want[:5])
    np.testing.assert_array_equal(ran.memrefs[1], want[:5])
