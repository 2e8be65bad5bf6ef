"""A search space: named choices, each a finite tuple of values (tile sizes, loop orders, flows...).

Finite categorical choices map onto every searcher the same way (Optuna's categorical
distributions, nevergrad's ``Choice``, random and grid search), and make a point hashable.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from dataclasses import dataclass

from loom.errors import LoomError


@dataclass(frozen=True)
class Choice:
    values: tuple

    def __post_init__(self):
        if not self.values:
            raise LoomError("a choice needs at least one value")


@dataclass(frozen=True)
class Space:
    choices: dict[str, Choice]

    def __post_init__(self):
        if not self.choices:
            raise LoomError("the search space has no choices")

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
