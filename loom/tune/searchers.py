"""Ask/tell searchers over a ``Space``: Optuna (default), nevergrad (as nelli used: NGOpt), random, grid.

    searcher = make_searcher("optuna", space, seed=0, storage="sqlite:///study.db", study="mm")
    trial = searcher.ask()          # trial.params: one value per choice
    searcher.tell(trial, seconds)   # lower is better; float("inf") marks a failed point

Optuna with a ``storage`` URL (SQLite) is resumable: the same study name continues where an
earlier run stopped, and its finished trials count towards the budget.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from loom.errors import LoomError
from loom.tune.space import Space

SEARCHERS = ("optuna", "nevergrad", "random", "grid")
FAILED = float("inf")


@dataclass
class Trial:
    number: int
    params: dict
    handle: Any = field(default=None, repr=False)  # the library's own trial object


class Searcher:
    """Base: ``ask`` returns the next point, ``tell`` reports its value (lower is better)."""

    def __init__(self, space: Space, seed: int = 0):
        self.space = space
        self.seed = seed
        self.told: list[tuple[dict, float]] = []
        self.pending: list[dict] = []  # suggested points not asked yet

    @property
    def finished(self) -> int:
        """Trials already finished before this run (a resumed study)."""
        return 0

    def previous(self) -> list[tuple[dict, float]]:
        """(point, value) of the trials an earlier run of a resumed study finished."""
        return []

    def ask(self) -> Trial | None:  # None: nothing left to try
        raise NotImplementedError

    def tell(self, trial: Trial, value: float) -> None:
        self.told.append((trial.params, value))

    def suggest(self, point: dict) -> None:
        """Make ``point`` (a point of the space) one of the next asked trials: a known-good start."""
        self.space.check(point)
        self._suggest(point)

    def _suggest(self, point: dict) -> None:
        self.pending.append(point)

    def _pending(self) -> dict | None:
        return self.pending.pop(0) if self.pending else None

    def _indices(self, point: dict) -> dict:
        return {n: self.space.choices[n].values.index(point[n]) for n in self.space.choices}


class RandomSearcher(Searcher):
    def __init__(self, space: Space, seed: int = 0):
        super().__init__(space, seed)
        self.rng = random.Random(seed)
        self.count = 0

    def ask(self) -> Trial:
        self.count += 1
        point = self._pending() or {n: self.rng.choice(c.values) for n, c in self.space.choices.items()}
        return Trial(self.count - 1, point)


class GridSearcher(Searcher):
    def __init__(self, space: Space, seed: int = 0):
        super().__init__(space, seed)
        self.points = enumerate(space.points())

    def ask(self) -> Trial | None:
        number, point = next(self.points, (None, None))
        return None if point is None else Trial(number, point)

    def _suggest(self, point: dict) -> None:
        pass  # the grid visits every point anyway


class OptunaSearcher(Searcher):
    def __init__(self, space: Space, seed: int = 0, storage: str | None = None, study: str | None = None):
        super().__init__(space, seed)
        optuna = _import("optuna", "optuna")
        optuna.logging.set_verbosity(optuna.logging.WARNING)
        sampler = optuna.samplers.TPESampler(seed=seed)
        try:
            self.study = optuna.create_study(storage=storage, study_name=study, sampler=sampler,
                                             load_if_exists=storage is not None, direction="minimize")
        except Exception as error:  # noqa: BLE001 - optuna's storage errors have many types
            raise LoomError(f"cannot open the Optuna study: {error}", where="--storage") from None
        self._distributions = {n: optuna.distributions.CategoricalDistribution(list(range(len(c.values))))
                               for n, c in space.choices.items()}
        done = (optuna.trial.TrialState.COMPLETE, optuna.trial.TrialState.FAIL)  # both used budget
        self._finished = sum(1 for t in self.study.get_trials(deepcopy=False) if t.state in done)

    @property
    def finished(self) -> int:
        return self._finished

    def previous(self) -> list[tuple[dict, float]]:
        complete = _import("optuna", "optuna").trial.TrialState.COMPLETE
        return [({n: self.space.choices[n].values[t.params[n]] for n in self.space.choices}, t.value)
                for t in self.study.get_trials(deepcopy=False) if t.state == complete and t.params.keys() >= self.space.choices.keys()]

    def _suggest(self, point: dict) -> None:
        self.study.enqueue_trial(self._indices(point), skip_if_exists=True)

    def ask(self) -> Trial:
        # choices travel as indices: Optuna's categorical values must be plain scalars
        handle = self.study.ask(self._distributions)
        params = {n: self.space.choices[n].values[handle.params[n]] for n in self.space.choices}
        return Trial(handle.number, params, handle)

    def tell(self, trial: Trial, value: float) -> None:
        super().tell(trial, value)
        if value == FAILED:
            self.study.tell(trial.handle, state=_import("optuna", "optuna").trial.TrialState.FAIL)
        else:
            self.study.tell(trial.handle, value)


class NevergradSearcher(Searcher):
    """Only the choices with two or more values go to nevergrad; one-valued choices are constants.
    (A one-dimensional problem, a space of a single one-valued choice, makes nevergrad's CMA switch
    to fcmaes, an optional package, in a class-wide setting that then breaks every later search of
    the process.) A space of one point needs no optimizer."""

    def __init__(self, space: Space, seed: int = 0, budget: int = 100, optimizer: str = "NGOpt"):
        super().__init__(space, seed)
        ng = _import("nevergrad", "nevergrad")
        self.varying = [n for n, c in space.choices.items() if len(c.values) > 1]
        self.fixed = {n: c.values[0] for n, c in space.choices.items() if len(c.values) == 1}
        self.optimizer = None
        if optimizer not in ng.optimizers.registry:
            raise LoomError(f"unknown nevergrad optimizer {optimizer!r}", where="--optimizer")
        if self.varying:
            parametrization = ng.p.Dict(**{n: ng.p.Choice(list(range(len(space.choices[n].values))))
                                           for n in self.varying})
            parametrization.random_state.seed(seed)
            self.optimizer = ng.optimizers.registry[optimizer](parametrization=parametrization, budget=budget)
        self.count = 0

    def _suggest(self, point: dict) -> None:
        if self.optimizer is not None:
            self.optimizer.suggest({n: i for n, i in self._indices(point).items() if n in self.varying})

    def ask(self) -> Trial:
        self.count += 1
        if self.optimizer is None:
            return Trial(self.count - 1, dict(self.fixed))
        handle = self.optimizer.ask()
        chosen = {n: self.space.choices[n].values[handle.value[n]] for n in self.varying}
        return Trial(self.count - 1, {n: chosen[n] if n in chosen else self.fixed[n] for n in self.space.choices},
                     handle)

    def tell(self, trial: Trial, value: float) -> None:
        super().tell(trial, value)
        if self.optimizer is not None:
            self.optimizer.tell(trial.handle, value if value != FAILED else 1e30)


def make_searcher(name: str, space: Space, *, seed: int = 0, budget: int = 100, storage: str | None = None,
                  study: str | None = None) -> Searcher:
    if name == "optuna":
        return OptunaSearcher(space, seed, storage, study)
    if storage is not None:
        raise LoomError(f"--storage (a resumable study) needs the optuna searcher, not {name}", where="--storage")
    if study is not None:
        raise LoomError(f"--study names a study in --storage, which needs the optuna searcher, not {name}",
                        where="--study")
    if name == "nevergrad":
        return NevergradSearcher(space, seed, budget)
    if name == "random":
        return RandomSearcher(space, seed)
    if name == "grid":
        return GridSearcher(space, seed)
    raise LoomError(f"unknown searcher {name!r}; expected one of {', '.join(SEARCHERS)}", where="--searcher")


def _import(module: str, extra: str):
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        raise LoomError(f"the {module} searcher needs the '{module}' package: pip install 'loom[tune]'") from None
