"""The one error type users see.

Every user-facing failure (bad kernel source, bad accelerator description,
bad schedule, bad call arguments) is a ``LoomError`` that names *where* the
problem is (a file and line, a JSON path, an opcode) and *what* was expected.
The CLI prints it without a Python traceback.
"""

from __future__ import annotations

import functools
import os


class LoomError(Exception):
    """A user-facing error with an optional source location.

    ``filename``/``line``/``column`` locate Python or text sources;
    ``where`` is a free-form location (a JSON path such as
    ``accelerators[0].opcode_map``, an opcode name, a Func name) for inputs
    that are not line-based. ``construct`` names the offending construct
    (``try``, ``break``, ``send_dim``...).
    """

    def __init__(
        self,
        message: str,
        *,
        filename: str | None = None,
        line: int | None = None,
        column: int | None = None,
        where: str | None = None,
        construct: str | None = None,
    ):
        self.message = message
        self.filename = filename
        self.line = line
        self.column = column
        self.where = where
        self.construct = construct
        super().__init__(self._render())

    @property
    def location(self) -> str:
        parts = []
        if self.filename is not None:
            loc = self.filename
            if self.line is not None:
                loc += f":{self.line}"
                if self.column is not None:
                    loc += f":{self.column}"
            parts.append(loc)
        if self.where is not None:
            parts.append(self.where)
        return " ".join(parts)

    def _render(self) -> str:
        loc = self.location
        return f"{loc}: {self.message}" if loc else self.message

    def __str__(self) -> str:  # keep in sync if attributes are edited later
        return self._render()


class LoomWarning(UserWarning):
    """Something loom accepts but that likely does not mean what its author meant (an EKL chain
    ``a - b + c``, which groups to the right); the message names the place, as a LoomError's does."""


def user_boundary(fn):
    """Marks a public entry point (a kernel's call, compile, IR): a LoomError leaves it with loom's own frames cut
    from its traceback, which then ends at the user's call. The error names the user's file and line; the dozens
    of tracer frames under it say nothing more to them. ``LOOM_TRACEBACK=1`` keeps the frames (loom's bugs)."""

    @functools.wraps(fn)
    def entry(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except LoomError as err:
            if os.environ.get("LOOM_TRACEBACK"):
                raise
            raise err.with_traceback(None)  # noqa: B904: the error itself, its own cause kept

    return entry
