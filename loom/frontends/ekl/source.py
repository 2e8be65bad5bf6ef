"""EKL source text and positions: every EKL error is a LoomError at file:line:col with a caret line."""

from __future__ import annotations

from dataclasses import dataclass

from loom.errors import LoomError


@dataclass(frozen=True)
class Source:
    """One EKL source text; ``name`` is its file name (or ``<ekl>`` for a string)."""

    text: str
    name: str = "<ekl>"

    def line_text(self, line: int) -> str:
        lines = self.text.splitlines()
        return lines[line - 1] if 0 < line <= len(lines) else ""


@dataclass(frozen=True)
class Loc:
    """A 1-based line and column in a ``Source``."""

    source: Source
    line: int
    column: int

    def error(self, message: str, construct: str | None = None) -> LoomError:
        """A LoomError at this place; the message carries the source line and a caret under the column."""
        text = self.source.line_text(self.line)
        caret = " " * (self.column - 1) + "^"
        return LoomError(
            f"{message}\n    {text}\n    {caret}",
            filename=self.source.name, line=self.line, column=self.column, construct=construct,
        )

    def warn(self, message: str) -> None:
        """A LoomWarning at this place, rendered as ``error`` renders its message."""
        import warnings

        from loom.errors import LoomWarning

        warnings.warn(LoomWarning(str(self.error(message))), stacklevel=2)

    def __str__(self) -> str:
        return f"{self.source.name}:{self.line}:{self.column}"
