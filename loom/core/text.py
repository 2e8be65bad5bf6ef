"""Reading one line of user text with errors that point at the column.

Every small language loom reads (affine maps, opcode maps and flows) goes
through a ``TextCursor``; its ``fail`` builds the ``LoomError`` with the text
repeated and a caret under the offending character.
"""

from __future__ import annotations

import difflib
import functools
import re
from typing import Callable, TypeVar

from loom.errors import LoomError


_SPACE = re.compile(r"\s*")
_P = TypeVar("_P", bound=Callable)
MEMO_ENTRIES = 4096


def memoized_parser(parse: _P) -> _P:
    """Cache a parser's successful results by its text and options, never by ``where``/``filename``.

    A description family repeats the same maps, flows and opcode maps hundreds of times; parsing
    each once keeps loading linear in the file with a small constant. Failures are not cached:
    each raises with the location of its own call. Results must be immutable (frozen ASTs)."""
    cache: dict = {}

    @functools.wraps(parse)
    def wrapper(text, *args, where=None, filename=None, **options):
        key = (text, args, tuple(sorted(options.items())))
        hit = cache.get(key)
        if hit is not None:
            return hit
        result = parse(text, *args, where=where, filename=filename, **options)
        if len(cache) >= MEMO_ENTRIES:  # bounded: a fuzzer's stream of distinct texts cannot grow it
            cache.clear()
        cache[key] = result
        return result

    return wrapper  # type: ignore[return-value]


def did_you_mean(word: str, choices) -> str:
    """`` (did you mean 'x'?)`` or an empty string."""
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def located_error(
    text: str, pos: int, message: str, *, where: str | None = None, filename: str | None = None
) -> LoomError:
    """A LoomError pointing at ``text[pos]`` with the line shown and a caret under it."""
    pos = max(0, min(pos, len(text)))
    line_start = text.rfind("\n", 0, pos) + 1
    line_end = text.find("\n", pos)
    line_end = len(text) if line_end < 0 else line_end
    column = pos - line_start + 1
    line_no = text.count("\n", 0, pos) + 1
    shown = text[line_start:line_end]
    caret_at = column - 1
    if len(shown) > 100:  # long one-line maps: show a window around the error
        start = max(0, caret_at - 50)
        shown = ("..." if start else "") + shown[start : start + 100] + ("..." if start + 100 < len(shown) else "")
        caret_at = caret_at - start + (3 if start else 0)
    prefix = f"line {line_no} of the text, " if "\n" in text else ""
    body = f"{message} ({prefix}column {column})\n    {shown}\n    {' ' * caret_at}^"
    return LoomError(body, column=column, where=where, filename=filename)


class TextCursor:
    """A cursor over user text; every parse error goes through ``fail``."""

    def __init__(self, text: str, where: str | None, filename: str | None):
        self.text = text
        self.pos = 0
        self.where = where
        self.filename = filename

    def fail(self, message: str, pos: int | None = None) -> LoomError:
        return located_error(
            self.text, self.pos if pos is None else pos, message, where=self.where, filename=self.filename
        )

    def skip_space(self) -> None:
        self.pos = _SPACE.match(self.text, self.pos).end()  # type: ignore[union-attr]

    def peek(self) -> str:
        self.skip_space()
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def found(self) -> str:
        ch = self.peek()
        return f"{ch!r}" if ch else "the end of the text"

    def accept(self, token: str) -> bool:
        self.skip_space()
        if self.text.startswith(token, self.pos):
            self.pos += len(token)
            return True
        return False

    def expect(self, token: str, what: str | None = None) -> None:
        if not self.accept(token):
            raise self.fail(f"expected {what or repr(token)} but found {self.found()}")

    def match(self, pattern: re.Pattern) -> str | None:
        """Consume and return the text ``pattern`` matches at the cursor (after spaces), if any."""
        self.skip_space()
        m = pattern.match(self.text, self.pos)
        if not m:
            return None
        self.pos = m.end()
        return m.group()

    def at_end(self) -> bool:
        self.skip_space()
        return self.pos >= len(self.text)
