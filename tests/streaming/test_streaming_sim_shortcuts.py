"""The value simulation's shortcuts (analytic read-after-write of translation ports, int32 cycle numbers)
refuse exactly what the per-read check refuses, and accept exactly what it accepts."""

import itertools

import numpy as np
import pytest

from tests.streaming.streaming_apps import example

import importlib
from loom.errors import LoomError
from loom.streaming import build_design, simulate
from loom.streaming.scheduler import StagePlan
from loom.streaming.unified_buffer import CycleSchedule

sim_mod = importlib.import_module("loom.streaming.simulate")  # the package re-exports the function as simulate


def _early_reads_by_brute_force(ext_p, sp, ext_c, sc, offs, used):
    """Independent reference: walk every consumer point, compare its read cycle with the write cycle."""
    for p in itertools.product(*[range(e) for e in ext_c]):
        q = [offs[j] + (p[used[j]] if j in used else 0) for j in range(len(ext_p))]
        t_w = sp.offset + sum(s * v for s, v in zip(sp.strides, q))
        t_r = sc.offset + sum(s * v for s, v in zip(sc.strides, p))
        if t_w > t_r:
            return True
    return False


def test_analytic_read_after_write_agrees_with_every_read_on_random_translation_ports():
    rng = np.random.default_rng(15)
    decided = {True: 0, False: 0}
    for _ in range(300):
        nd = int(rng.integers(1, 4))
        ext_c = tuple(int(v) for v in rng.integers(1, 6, nd))
        perm = [int(v) for v in rng.permutation(nd)]
        used = {j: perm[j] for j in range(nd)}
        offs = tuple(int(v) for v in rng.integers(0, 3, nd))
        ext_p = tuple(ext_c[used[j]] + offs[j] for j in range(nd))
        sp = CycleSchedule(int(rng.integers(-20, 20)), tuple(int(v) for v in rng.integers(0, 8, nd)))
        sc = CycleSchedule(int(rng.integers(-20, 40)), tuple(int(v) for v in rng.integers(0, 8, nd)))
        matrix = tuple(tuple(1 if k == used[j] else 0 for k in range(nd)) for j in range(nd))
        prod = StagePlan("p", None, (0,) * nd, ext_p, sp)
        cons = StagePlan("c", None, (0,) * nd, ext_c, sc)
        proven = sim_mod._reads_after_write_proven(prod, cons, matrix, offs)
        early = _early_reads_by_brute_force(ext_p, sp, ext_c, sc, offs, used)
        assert proven == (not early), (ext_c, offs, used, sp, sc)
        decided[proven] += 1
    assert decided[True] > 30 and decided[False] > 30  # both outcomes exercised


def test_the_shortcut_is_not_taken_for_lanes_or_non_translations():
    prod = StagePlan("p", None, (0, 0), (6, 6), CycleSchedule(0, (1, 6)))
    cons = StagePlan("c", None, (0, 0), (3, 3), CycleSchedule(100, (1, 6)))
    assert sim_mod._reads_after_write_proven(prod, cons, ((1, 0), (0, 1)), (0, 0))
    assert not sim_mod._reads_after_write_proven(prod, cons, ((2, 0), (0, 1)), (0, 0))  # stride 2
    assert not sim_mod._reads_after_write_proven(prod, cons, ((1, 0), (0, 1)), (0, 0), (2, 1))  # x / 2
    packed = StagePlan("c", None, (0, 0), (3, 3), CycleSchedule(100, (1, 6), lanes=2))
    assert not sim_mod._reads_after_write_proven(prod, packed, ((1, 0), (0, 1)), (0, 0))


def _outcome(out, img, size, design, capacities=None):
    try:
        return ("ok", simulate(out, {"input": img}, size, design=design, capacities=capacities).tobytes())
    except LoomError as e:
        return ("error", str(e))


def _without_shortcuts(monkeypatch):
    monkeypatch.setattr(sim_mod, "_reads_after_write_proven", lambda *a, **k: False)
    monkeypatch.setattr(sim_mod, "_time_dtype", lambda design: np.int64)


@pytest.mark.parametrize("name, size", [("harris", (19, 13)), ("cascade", (17, 11))])
def test_shortcuts_refuse_what_the_per_read_check_refuses(name, size, monkeypatch):
    """Every stage shifted one cycle early or late, and every buffer one word short: same verdict, same message."""
    mod = example(name)
    out, _ = mod.build("accel", tile=size)
    base = build_design(out, size)
    img = np.random.default_rng(4).integers(0, 256, mod.input_shape(size), dtype=np.uint8)
    cases = [(None, None)]
    for stage in base.stages:
        if base.stages[stage].node.kind != "stream":
            cases += [(stage, -1), (stage, +1)]
    cases += [(buf, "cap") for buf, cap in base.capacities.items() if cap]
    fast, slow = [], []
    for runs, patch in ((fast, False), (slow, True)):
        if patch:
            _without_shortcuts(monkeypatch)
        for what, how in cases:
            caps = None
            if how == "cap":
                caps = {what: base.capacities[what] - 1}
            elif what is not None:  # the design holds the Funcs by identity: shift in place, then restore
                base.stages[what].schedule.offset += how
            try:
                runs.append(_outcome(out, img, size, base, caps))
            finally:
                if what is not None and how != "cap":
                    base.stages[what].schedule.offset -= how
    assert fast == slow
    verdicts = [o[1] for o in fast if o[0] == "error"]
    assert any("read before write" in v for v in verdicts)
    assert any("read after eviction" in v for v in verdicts)
    assert sum("capacity" in v for v in verdicts) >= sum(1 for _, how in cases if how == "cap")
    assert fast[0][0] == "ok"  # the unperturbed design passes


def test_an_undersized_buffer_on_a_translation_port_is_refused():
    """harris's buffers are read only by translation ports, so their reads take the analytic path."""
    mod = example("harris")
    out, _ = mod.build("accel", tile=(24, 16))
    d = build_design(out, (24, 16))
    img = np.random.default_rng(1).integers(0, 256, mod.input_shape((24, 16)), dtype=np.uint8)
    translations = [r for r in d.reads if sim_mod._translation(r[2], len(d.stages[r[1]].iteration().extents), r[4])
                    is not None]
    assert translations and len(translations) == len(d.reads)
    assert sim_mod._time_dtype(d) == np.int32
    for buf, cap in d.capacities.items():
        if cap:
            with pytest.raises(LoomError, match=f"buffer '{buf}'.*capacity {cap - 1} \\(read after eviction\\)"):
                simulate(out, {"input": img}, (24, 16), design=d, capacities={buf: cap - 1})


def test_write_histogram_of_injective_schedules_equals_counting_the_cycles():
    rng = np.random.default_rng(7)
    filled = 0
    for _ in range(300):
        nd = int(rng.integers(1, 4))
        extents = tuple(int(v) for v in rng.integers(1, 6, nd))
        sched = CycleSchedule(int(rng.integers(-10, 10)), tuple(int(v) for v in rng.integers(0, 12, nd)),
                              int(rng.choice([1, 1, 1, 2])))
        plan = StagePlan("p", None, (0,) * nd, extents, sched)
        t = sim_mod._times(plan, np.int64)
        base = int(t.min())
        span = int(t.max()) - base + 1 + int(rng.integers(0, 5))
        want = np.bincount((t - base).ravel(), minlength=span)
        got = sim_mod._write_histogram(sched, extents, base, span)
        if got is not None:
            np.testing.assert_array_equal(got, want)
            filled += 1
        else:  # refused only when two points share a cycle, or lanes pack points
            assert sched.lanes != 1 or want.max() > 1 or not _injective_by_mixed_radix(sched.strides, extents)
    assert filled > 50


def _injective_by_mixed_radix(strides, extents):
    reach = 0
    for s, e in sorted((s, e) for s, e in zip(strides, extents) if e > 1):
        if s <= reach:
            return False
        reach += s * (e - 1)
    return True


@pytest.mark.parametrize("name", ["harris", "unsharp"])
def test_window_ops_shared_over_the_buffer_give_the_same_pixels_with_fewer_ops(name, monkeypatch):
    """Element-wise ops on one translated window run once per buffer; pixels stay equal to numpy's.
    (unsharp reads a ROM with ubuf.lookup, which is never evaluated over a whole buffer.)"""
    from tests.streaming.streaming_apps import references
    from loom.streaming.kernel_eval import KernelEvaluator

    mod = example(name)
    size = (21, 14)
    out, _ = mod.build("accel", tile=size)
    full = size if name == "harris" else size + (3,)
    img = np.random.default_rng(9).integers(0, 256, mod.input_shape(size), dtype=np.uint8)
    calls = {"n": 0}
    plain_op = KernelEvaluator.op

    def counted(self, op, xs):
        calls["n"] += 1
        return plain_op(self, op, xs)

    monkeypatch.setattr(KernelEvaluator, "op", counted)
    shared = simulate(out, {"input": img}, full)
    n_shared, calls["n"] = calls["n"], 0
    monkeypatch.setattr(KernelEvaluator, "_shared_key", lambda self, op, shared: None)
    plain = simulate(out, {"input": img}, full)
    np.testing.assert_array_equal(shared, plain)
    np.testing.assert_array_equal(shared, getattr(references, name)(img, *size))
    if name == "harris":
        assert n_shared < calls["n"] * 0.8
