"""The tuner: searchers (Optuna resumable from SQLite, nevergrad, random, grid), the result cache,
CPU schedules that must compute what numpy computes, accelerator-driver tuning."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from loom import F32, Dim, I32, MemRef, kernel, linalg
from loom.errors import LoomError
from loom.tune import AccelObjective, Choice, CpuObjective, CpuSchedule, Space, tune
from loom.tune.results import ResultCache
from loom.tune.searchers import make_searcher

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
V4 = str(ROOT / "loom" / "examples" / "accelerators" / "matmul_v4.json")


class Bowl:
    """A synthetic objective with a known minimum at x=3, y=-2 (no compiling): counts evaluations."""

    ir = "bowl"
    options = {"v": 1}
    space = Space({"x": Choice(tuple(range(-8, 9))), "y": Choice(tuple(range(-8, 9))), "z": Choice(("a", "b"))})

    def __init__(self):
        self.calls = 0

    def evaluate(self, p):
        self.calls += 1
        if p["x"] == -8:
            raise LoomError("x=-8 cannot be built")
        return (p["x"] - 3) ** 2 + (p["y"] + 2) ** 2 + (p["z"] == "b"), ""


@pytest.mark.parametrize("searcher", ["optuna", "nevergrad", "random"])
def test_searchers_find_the_bowls_bottom_region(searcher):
    if searcher != "random":
        pytest.importorskip(searcher)
    result = tune(Bowl(), searcher=searcher, budget=60, cache=False, progress=False)
    assert len(result.history) == 60
    assert result.best.value <= 5  # 578 points; random search reaches this with ~60 draws as well
    assert result.best.value == min(p.value for p in result.ok)
    assert all(p.value == float("inf") for p in result.history if p.params["x"] == -8)


def test_grid_is_exhaustive_and_finds_the_minimum():
    small = Bowl()
    small.space = Space({"x": Choice((1, 3, 5)), "y": Choice((-2, 0)), "z": Choice(("a", "b"))})
    result = tune(small, searcher="grid", budget=100, cache=False, progress=False)
    assert len(result.history) == 12 and result.best.params == {"x": 3, "y": -2, "z": "a"} and result.best.value == 0


def test_optuna_study_resumes_from_sqlite(tmp_path):
    pytest.importorskip("optuna")
    storage = f"sqlite:///{tmp_path / 'study.db'}"
    first = tune(Bowl(), storage=storage, study="bowl", budget=10, cache=False, progress=False)
    again = Bowl()
    second = tune(again, storage=storage, study="bowl", budget=25, cache=False, progress=False)
    assert second.resumed == 10 and again.calls == 15 and len(second.measured) == 15
    assert second.best.value <= first.best.value
    done = Bowl()
    third = tune(done, storage=storage, study="bowl", budget=25, cache=False, progress=False)
    assert done.calls == 0 and third.resumed == 25


def test_result_cache_is_keyed_by_ir_and_options(tmp_path):
    cache = ResultCache(tmp_path / "r.sqlite")
    first = Bowl()
    tune(first, searcher="grid", budget=20, cache=cache, progress=False)
    repeat = Bowl()
    result = tune(repeat, searcher="grid", budget=20, cache=cache, progress=False)
    assert repeat.calls == 0 and result.cached == 20
    changed = Bowl()
    changed.options = {"v": 2}  # other options: measured again
    tune(changed, searcher="grid", budget=20, cache=cache, progress=False)
    assert changed.calls == 20


def test_bad_searcher_options():
    with pytest.raises(LoomError, match="unknown searcher"):
        tune(Bowl(), searcher="bayes", budget=3, cache=False, progress=False)
    with pytest.raises(LoomError, match="needs the optuna searcher"):
        make_searcher("random", Bowl.space, storage="sqlite:///x.db")
    with pytest.raises(LoomError, match="--study names a study") as err:  # not silently ignored
        make_searcher("grid", Bowl.space, study="mm")
    assert err.value.where == "--study"
    with pytest.raises(LoomError, match="budget must be >= 1"):
        tune(Bowl(), budget=0, cache=False, progress=False)


# ------------------------------------------------------------------------------ CPU schedules
def _matmul():
    from loom.examples.kernels import EXAMPLES

    return EXAMPLES["matmul_linalg"].kernel


@pytest.mark.sanitize
@settings(max_examples=40, deadline=None, derandomize=True)
@given(order=st.permutations([0, 1, 2]), tiles=st.lists(st.sampled_from([0, 2, 3, 8]), min_size=3, max_size=3),
       unroll=st.sampled_from([1, 2, 3, 4]), native=st.booleans(), threads=st.sampled_from([1, 2]),
       vector=st.sampled_from([-1, 0, 8]), accumulate=st.booleans(), pack=st.booleans(),
       interchange=st.permutations([0, 1, 2]))
def test_every_cpu_schedule_of_a_matmul_computes_a_times_b(order, tiles, unroll, native, threads, vector,
                                                            accumulate, pack, interchange):
    from loom.backends.c import compile_module
    from loom.passes.recipes import lower_to_c, lower_to_loops
    from loom.tune.cpu import _set_threads

    kernel = _matmul()
    schedule = CpuSchedule(tuple(order), tuple(tiles), unroll, native, threads, vector, accumulate,
                           tuple(interchange), pack)
    fn = compile_module(lower_to_c(schedule.apply(lower_to_loops(kernel.module))), native=native).function(kernel.name)
    rng = np.random.default_rng(sum(tiles) + unroll)
    a, b = rng.standard_normal((13, 7)).astype(np.float32), rng.standard_normal((7, 10)).astype(np.float32)
    c = rng.standard_normal((13, 10)).astype(np.float32)
    want = c + a.astype(np.float64) @ b
    _set_threads(threads)
    fn(a, b, c)
    np.testing.assert_allclose(c, want, rtol=1e-4, atol=1e-4)


def test_cpu_tuning_finds_a_schedule_at_least_as_fast_as_none():
    kernel = _matmul()
    rng = np.random.default_rng(0)
    args = [rng.random((96, 96), dtype=np.float32), rng.random((96, 96), dtype=np.float32),
            np.zeros((96, 96), np.float32)]
    objective = CpuObjective(kernel, args, repeats=3)
    assert {"order", "tile0", "tile1", "tile2", "unroll", "native", "threads", "vector", "accumulate", "pack",
            "interchange"} == set(objective.space.choices)
    result = tune(objective, searcher="random", budget=6, cache=False, progress=False)
    assert result.failed == 0 and len(result.history) == 6


def test_a_schedule_that_changes_the_result_is_a_failed_point(monkeypatch):
    kernel = _matmul()
    args = [np.ones((8, 8), np.float32), np.ones((8, 8), np.float32), np.zeros((8, 8), np.float32)]
    objective = CpuObjective(kernel, args, repeats=1)
    objective.reference[2] = objective.reference[2] + 1  # what a wrong transformation would give
    result = tune(objective, searcher="random", budget=2, cache=False, progress=False)
    assert result.failed == 2 and "changes argument 2" in result.history[0].detail


@pytest.mark.parametrize("searcher", ["optuna", "nevergrad", "random"])
def test_suggested_points_are_tried_first_then_the_search_goes_on(searcher):
    start = {"x": 3, "y": -2, "z": "a"}  # the bowl's bottom
    bowl = Bowl()
    bowl.suggestions = lambda: [start]
    result = tune(bowl, searcher=searcher, budget=10, cache=False, progress=False)
    assert result.history[0].params == start and result.best.value == 0
    assert len(result.history) == 10 and bowl.calls == 10


def test_a_suggestion_outside_the_space_is_refused():
    with pytest.raises(LoomError, match="not one of the choices"):
        make_searcher("random", Bowl.space).suggest({"x": 99, "y": 0, "z": "a"})


def test_micro_kernel_orders_put_the_reduction_outside_the_output_tile():
    from loom.passes.recipes import lower_to_loops
    from loom.tune.cpu_schedule import micro_kernel_orders, outer_nest

    # matmul i, j, k: i k j (j alone inside k) and k i j (the i x j tile inside k)
    assert micro_kernel_orders(outer_nest(lower_to_loops(_matmul().module), "matmul_linalg")) == [(0, 2, 1), (2, 0, 1)]
    # conv n, f, oh, ow, c, kh, kw: c kh kw around ow, or around ow and one other output loop
    nest = outer_nest(lower_to_loops(conv_small.module), "conv_small")
    assert micro_kernel_orders(nest) == [(0, 1, 2, 4, 5, 6, 3), (1, 2, 4, 5, 6, 0, 3), (0, 2, 4, 5, 6, 1, 3),
                                         (0, 1, 4, 5, 6, 2, 3)]


@kernel
def conv_small(I: MemRef[(1, 1, 6, 6), F32], W: MemRef[(3, 1, 3, 3), F32], O: MemRef[(1, 3, 4, 4), F32]):
    linalg.conv_2d_nchw_fchw(I, W, O)


def test_tuned_conv_starts_from_micro_kernels_that_compute_the_convolution():
    rng = np.random.default_rng(2)
    x, w = rng.standard_normal((1, 1, 6, 6)).astype(np.float32), rng.standard_normal((3, 1, 3, 3)).astype(np.float32)
    objective = CpuObjective(conv_small, [x, w, np.zeros((1, 3, 4, 4), np.float32)], repeats=1, max_threads=1)
    suggested = objective.suggestions()
    assert suggested and all(p["accumulate"] and p["native"] for p in suggested)
    result = tune(objective, searcher="random", budget=len(suggested), cache=False, progress=False)
    assert result.failed == 0  # every suggestion equals the unscheduled kernel (checked by evaluate)
    want = np.zeros((1, 3, 4, 4))
    for dy in range(3):
        for dx in range(3):
            want[0] += w[:, 0, dy, dx, None, None] * x[0, 0, dy:dy + 4, dx:dx + 4]
    np.testing.assert_allclose(objective.reference[2], want, rtol=1e-5, atol=1e-5)


# ------------------------------------------------------------------------------ accelerator drivers
M, N, K = Dim("M"), Dim("N"), Dim("K")


@kernel
def mm(A: MemRef[(M, K), I32], B: MemRef[(K, N), I32], C: MemRef[(M, N), I32]):
    linalg.matmul(A, B, C)


def test_accelerator_tuning_searches_flows_tiles_and_double_buffering():
    rng = np.random.default_rng(2)
    args = [rng.integers(-5, 5, (32, 48)).astype(np.int32), rng.integers(-5, 5, (48, 16)).astype(np.int32),
            np.zeros((32, 16), np.int32)]
    objective = AccelObjective(mm, V4, "v4_16", args)
    assert set(objective.space.choices["flow"].values) == {"Ns", "As", "Bs", "Cs"}
    assert objective.space.choices["double_buffer"].values == (False, True)
    result = tune(objective, searcher="grid", budget=8, cache=False, progress=False)
    assert result.failed == 0 and result.best.value > 0
