"""Sweeps of user point functions: a configuration that cannot run (bad chunk or worker count, points
that are not dicts, a function the workers cannot receive) is a LoomError before any point runs."""

from __future__ import annotations

import pytest

from loom.errors import LoomError
from loom.tune import sweep


def square(point):
    return {"y": point["x"] ** 2}


@pytest.mark.parametrize("kwargs, message", [
    ({"chunk": -1}, "chunk must be a whole number >= 1"),
    ({"chunk": 2.5}, "chunk must be a whole number >= 1"),
    ({"workers": 0}, "--workers: workers must be a whole number >= 1"),
    ({"points": [1, 2]}, "a sweep point is a dict of parameters, got int 1"),
    ({"fn": "square"}, "the sweep function must be callable"),
    ({"fn": lambda p: {"y": 1}, "executor": "process"}, r"--executor: the sweep function .*<lambda>.* cannot be "
                                                        r"sent to worker processes"),
])
def test_a_bad_sweep_is_refused_before_any_point_runs(kwargs, message):
    args = {"fn": square, "points": [{"x": 1}, {"x": 2}], "executor": "serial", "progress": False, **kwargs}
    with pytest.raises(LoomError, match=message):
        sweep(args.pop("fn"), args.pop("points"), **args)


def test_a_local_function_sweeps_on_threads():
    result = sweep(lambda p: {"y": -p["x"]}, [{"x": 1}, {"x": 2}], executor="thread", progress=False)
    assert [r["y"] for r in result.rows] == [-1, -2]
