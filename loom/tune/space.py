"""A search space: named choices, each a finite tuple of values (tile sizes, loop orders, flows...).

Finite categorical choices map onto every searcher the same way (Optuna's categorical
distributions, nevergrad's ``Choice``, random and grid search), and make a point hashable.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from loom.errors import LoomError


@dataclass(frozen=True)
class Choice:
    values: tuple

    def __post_init__(self):
        if isinstance(self.values, (str, bytes)) or not isinstance(self.values, Sequence):
            raise LoomError(f"a choice takes a tuple of values, got {type(self.values).__name__} {self.values!r}")
        if not self.values:
            raise LoomError("a choice needs at least one value")
        object.__setattr__(self, "values", tuple(self.values))  # a list would make the point unhashable


@dataclass(frozen=True)
class Space:
    choices: dict[str, Choice]

    def __post_init__(self):
        if not isinstance(self.choices, Mapping):
            raise LoomError(f"a search space takes a dict of name -> Choice, got {type(self.choices).__name__}")
        if not self.choices:
            raise LoomError("the search space has no choices")
        for name, choice in self.choices.items():
            if not isinstance(name, str):
                raise LoomError(f"choice names must be strings, got {name!r}")
            if not isinstance(choice, Choice):
                hint = f": write Choice({tuple(choice)!r})" if isinstance(choice, (list, tuple)) else ""
                raise LoomError(f"{type(choice).__name__} {choice!r} is not a Choice{hint}", where=name)

    @property
    def size(self) -> int:
        n = 1
        for c in self.choices.values():
            n *= len(c.values)
        return n

    def points(self):
        """Every point, in a fixed order (grid search, exhaustive checks)."""
        names = list(self.choices)
        for values in itertools.product(*(self.choices[n].values for n in names)):
            yield dict(zip(names, values))

    def check(self, point: dict) -> dict:
        for name, choice in self.choices.items():
            if name not in point:
                raise LoomError(f"point has no value for {name!r}", where=name)
            if point[name] not in choice.values:
                raise LoomError(f"{point[name]!r} is not one of the choices {list(choice.values)}", where=name)
        return point


def point_key(point: dict) -> str:
    """A stable text for a point (JSON, tuples as lists, keys sorted)."""
    return json.dumps(point, sort_keys=True, default=list)


def content_hash(*parts: str) -> str:
    digest = hashlib.sha256()
    for part in parts:
        digest.update(part.encode())
        digest.update(b"\0")
    return digest.hexdigest()
