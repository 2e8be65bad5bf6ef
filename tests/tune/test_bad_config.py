"""The tuner on user objectives: a bad budget or search space is a LoomError before anything runs; an
objective's NaN is a failed point; nevergrad runs on every space (a one-point space made it need the
optional fcmaes package, for the rest of the process)."""

from __future__ import annotations

import numpy as np
import pytest

from loom.errors import LoomError
from loom.tune import Choice, Space, tune


class Line:
    """value = a + 10 b (no compiling)."""

    ir, options = "line", {}

    def __init__(self, space: Space):
        self.space = space

    def evaluate(self, p):
        return p["a"] + 10 * p.get("b", 0), ""


SPACE = Space({"a": Choice((3, 1, 2)), "b": Choice((1, 0))})


def _tune(objective, **kwargs):
    return tune(objective, cache=False, progress=False, **{"budget": 4, **kwargs})


@pytest.mark.parametrize("budget", [0, -1, 2.5, "5", None, True])
def test_a_budget_that_is_not_a_positive_whole_number_is_refused(budget):
    with pytest.raises(LoomError, match=r"--budget: budget must be >= 1 and a whole number, got"):
        _tune(Line(SPACE), budget=budget)


def test_numpy_integer_budget_is_taken():
    assert len(_tune(Line(SPACE), searcher="random", budget=np.int64(3)).history) == 3


@pytest.mark.parametrize("make, message", [
    (lambda: Space({"a": [1, 2]}), r"a: list \[1, 2\] is not a Choice: write Choice\(\(1, 2\)\)"),
    (lambda: Space([Choice((1,))]), "a search space takes a dict of name -> Choice, got list"),
    (lambda: Space({1: Choice((1,))}), "choice names must be strings, got 1"),
    (lambda: Choice(5), "a choice takes a tuple of values, got int 5"),
    (lambda: Choice("abc"), "a choice takes a tuple of values, got str 'abc'"),
    (lambda: Choice(()), "a choice needs at least one value"),
])
def test_a_malformed_search_space_is_refused(make, message):
    with pytest.raises(LoomError, match=message):
        make()


def test_a_choice_given_as_a_list_is_a_tuple():
    assert Choice([1, 2]).values == (1, 2)


@pytest.mark.parametrize("searcher", ["optuna", "nevergrad", "random", "grid"])
def test_a_nan_figure_is_a_failed_point_not_the_best(searcher):
    class Sometimes(Line):
        def evaluate(self, p):
            return (float("nan"), "unstable") if p["b"] == 0 else (float(p["a"]), "")

    result = _tune(Sometimes(SPACE), searcher=searcher, budget=6, seed=1)
    assert all(p.value == float("inf") and p.detail == "the objective gave nan, not a finite number (unstable)"
               for p in result.history if p.params["b"] == 0)
    assert result.best.params["b"] == 1 and np.isfinite(result.best.value)


def test_nevergrad_searches_one_point_and_one_valued_choices_then_any_space():
    one = _tune(Line(Space({"a": Choice((7,))})), searcher="nevergrad", budget=2)
    assert [p.params for p in one.history] == [{"a": 7}, {"a": 7}]
    fixed = _tune(Line(Space({"a": Choice((1, 2, 3)), "b": Choice((4,))})), searcher="nevergrad", budget=3)
    assert all(p.params["b"] == 4 for p in fixed.history)
    # nevergrad's CMA used to switch to fcmaes class-wide after a one-dimensional problem
    runs = [[p.params for p in _tune(Line(SPACE), searcher="nevergrad", budget=5, seed=2).history] for _ in range(2)]
    assert runs[0] == runs[1]
