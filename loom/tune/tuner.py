"""The tuning loop: ask a searcher for a point, measure it (or find it in the result cache), tell.

An objective is any object with ``ir`` (text), ``options`` (dict: what else decides the figure),
``space`` and ``evaluate(point) -> (value, detail)``; a ``LoomError`` from ``evaluate`` records
the point as failed (its message kept) and the search goes on. An objective may also offer
``suggestions()``: known-good points the searcher tries first (within the budget), like a
compiler's default schedule, from which the search goes on.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field

from loom.errors import LoomError
from loom.tune.progress import Progress
from loom.tune.results import ResultCache
from loom.tune.searchers import FAILED, make_searcher


@dataclass
class TunePoint:
    params: dict
    value: float
    detail: str
    cached: bool
    resumed: bool = False  # measured by an earlier run of the same study


@dataclass
class TuneResult:
    history: list[TunePoint] = field(default_factory=list)
    resumed: int = 0  # trials of an earlier run of the same study

    @property
    def ok(self) -> list[TunePoint]:
        return [p for p in self.history if p.value != FAILED]

    @property
    def best(self) -> TunePoint:
        if not self.ok:
            raise LoomError("no point of the search could be measured: "
                            + "; ".join(sorted({p.detail for p in self.history}))[:500])
        return min(self.ok, key=lambda p: p.value)

    @property
    def failed(self) -> int:
        return sum(p.value == FAILED for p in self.history)

    @property
    def cached(self) -> int:
        return sum(p.cached and not p.resumed for p in self.history)

    @property
    def measured(self) -> list[TunePoint]:
        """The points of this run (not those of a resumed study)."""
        return [p for p in self.history if not p.resumed]


def tune(objective, *, searcher: str = "optuna", budget: int = 100, seed: int = 0, storage: str | None = None,
         study: str | None = None, cache: ResultCache | None | bool = True, progress: bool = True) -> TuneResult:
    """Search ``objective.space`` for ``budget`` evaluations (a resumed study counts its earlier ones)."""
    _check_budget(budget)
    cache = ResultCache() if cache is True else (cache or None)
    search = make_searcher(searcher, objective.space, seed=seed, budget=budget, storage=storage, study=study)
    if not search.finished:  # a resumed study already tried them
        for point in getattr(objective, "suggestions", list)():
            search.suggest(point)
    result = TuneResult(resumed=search.finished)
    result.history += [TunePoint(params, value, "from the resumed study", True, True)
                       for params, value in search.previous()]
    todo = max(0, budget - search.finished)
    bar = Progress(todo, f"tune ({searcher})", enabled=progress)
    for _ in range(todo):
        trial = search.ask()
        if trial is None:  # grid exhausted
            break
        point = _measure(objective, trial.params, cache)
        search.tell(trial, point.value)
        result.history.append(point)
        bar.advance(point.value == FAILED, f"best {result.best.value:.4g}" if result.ok else "")
    return result


def _check_budget(budget) -> None:
    if isinstance(budget, bool) or not isinstance(budget, numbers.Integral) or budget < 1:
        raise LoomError(f"budget must be >= 1 and a whole number, got {budget!r}", where="--budget")


def _figure(value) -> float | None:
    """The objective's value as a float, or None when it is not a finite number (a NaN would
    otherwise compare as neither better nor worse and could end up as the best point)."""
    try:
        value = float(value)
    except (TypeError, ValueError):
        return None
    return value if math.isfinite(value) else None


def _measure(objective, params: dict, cache: ResultCache | None) -> TunePoint:
    key = ResultCache.key(objective.ir, params, objective.options) if cache else None
    if key and (hit := cache.get(key)) is not None:
        return TunePoint(params, hit[0], hit[1], True)
    try:
        value, detail = objective.evaluate(params)
    except LoomError as error:
        value, detail = FAILED, str(error)
    if value != FAILED and _figure(value) is None:
        given = f" ({detail})" if detail else ""
        value, detail = FAILED, f"the objective gave {value!r}, not a finite number{given}"
    value = float(value)
    if key:
        cache.put(key, value, detail)
    return TunePoint(params, value, detail, False)
