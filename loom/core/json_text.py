"""Reading JSON text strictly (accelerator and platform descriptions, loom's own files): every bad input
is a located LoomError.

Python's ``json`` module is lenient where a hardware description must not be, and
crashes where a user's file should get a message. ``decode_json(text)`` differs in:

* ``NaN``, ``Infinity`` and ``-Infinity`` (not JSON) are errors at their line:column;
* an integer literal longer than ``MAX_INT_DIGITS`` digits is an error (Python refuses
  to convert > 4300 digits, and no description value needs more than 20);
* a key repeated in one object is an error naming the key and the object's JSON path
  (``json`` silently keeps the last one);
* nesting deeper than ``MAX_DEPTH`` arrays/objects is an error at the line:column where
  it gets too deep (``json`` raises ``RecursionError`` at the interpreter's limit).

``read_json_file(path, what)`` adds the file (``what`` names it in messages, "the description" by default): unreadable files, files over ``MAX_FILE_BYTES``, bytes that
are not UTF-8 (located by line:column) and a leading byte-order mark (accepted). Decoding is one pass
of the C scanner plus one linear walk, so a 10 MB file loads in well under a second.
``check_decoded(value)`` applies the depth and finiteness rules to JSON a caller
decoded itself (``load_description(dict)``).
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from loom.errors import LoomError

MAX_DEPTH = 64  # a description nests ~6 levels; this leaves room and stays far from the C stack
MAX_INT_DIGITS = 40
MAX_FILE_BYTES = 64 << 20  # 6x the 10 MB that must load in under 2 s
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]', re.S)  # strings (skipped) and brackets


def _line_col(text: str, pos: int) -> tuple[int, int]:
    line = text.count("\n", 0, pos) + 1
    return line, pos - (text.rfind("\n", 0, pos) + 1) + 1


def _too_deep_at(text: str) -> int | None:
    """Position of the first bracket opening level MAX_DEPTH + 1 (strings skipped), or None."""
    depth = 0
    for m in _TOKEN.finditer(text):
        ch = m.group()
        if ch in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                return m.start()
        elif ch in "]}":
            depth -= 1
    return None


class _Strict:
    """Hooks for ``json.loads`` that record the first problem instead of guessing."""

    def __init__(self) -> None:
        self.duplicate: tuple[int, str] | None = None  # (id of the object, key)

    def pairs(self, pairs: list[tuple[str, Any]]) -> dict:
        obj = dict(pairs)
        if len(obj) != len(pairs) and self.duplicate is None:
            seen: set[str] = set()
            for key, _ in pairs:
                if key in seen:
                    self.duplicate = (id(obj), key)
                    break
                seen.add(key)
        return obj

    @staticmethod
    def integer(digits: str) -> int:
        if len(digits.lstrip("-")) > MAX_INT_DIGITS:
            raise _BadLiteral(f"an integer of {len(digits.lstrip('-'))} digits (at most {MAX_INT_DIGITS})")
        return int(digits)

    @staticmethod
    def number(token: str) -> float:
        value = float(token)
        if not math.isfinite(value):  # 1e400 overflows to inf
            raise _BadLiteral(f"{token} (too large: numbers must be finite)")
        return value

    @staticmethod
    def constant(name: str) -> Any:
        raise _BadLiteral(f"{name} (not JSON: numbers must be finite)")


class _BadLiteral(ValueError):
    pass


_LONG_INT = re.compile(rf'"(?:[^"\\]|\\.)*"|(-?[0-9]{{{MAX_INT_DIGITS + 1},}})', re.S)
_NON_FINITE = re.compile(r'"(?:[^"\\]|\\.)*"|(-?(?:NaN|Infinity)|-?[0-9.]+[eE][-+]?[0-9]+)', re.S)


def _literal_position(text: str, message: str) -> int:
    """Where the offending literal starts (the scanner does not say): the first one outside strings."""
    pattern = _LONG_INT if message.startswith("an integer of") else _NON_FINITE
    for m in pattern.finditer(text):
        if m.group(1) is not None and (pattern is _LONG_INT or not _finite_literal(m.group(1))):
            return m.start(1)
    return 0


def _finite_literal(token: str) -> bool:
    try:
        return math.isfinite(float(token))
    except ValueError:
        return False


_PLAIN_KEY = re.compile(r"[A-Za-z_$][A-Za-z0-9_]*")


def _child(path: str, key: str) -> str:
    """The JSON path of ``key`` in the object at ``path``, spelled as ``JsonNode`` spells it."""
    if not _PLAIN_KEY.fullmatch(key):
        return f"{path}[{json.dumps(key)}]"
    return f"{path}.{key}" if path else key


def _path_of(root: Any, target: int) -> str:
    """The JSON path of the object whose id is ``target`` (iterative: no recursion on deep input)."""
    stack: list[tuple[Any, str]] = [(root, "")]
    while stack:
        value, path = stack.pop()
        if id(value) == target:
            return path
        if isinstance(value, dict):
            for k, v in value.items():
                if isinstance(v, (dict, list)):
                    stack.append((v, _child(path, k)))
        elif isinstance(value, list):
            for i, v in enumerate(value):
                if isinstance(v, (dict, list)):
                    stack.append((v, f"{path}[{i}]"))
    return ""


def decode_json(text: str, *, filename: str | None = None) -> Any:
    """Decode JSON text with the strict rules of this module; errors name line:column or the JSON path."""
    strict = _Strict()
    try:
        data = json.loads(text, object_pairs_hook=strict.pairs, parse_int=strict.integer, parse_float=strict.number,
                          parse_constant=strict.constant)
    except _BadLiteral as exc:
        line, col = _line_col(text, _literal_position(text, str(exc)))
        raise LoomError(f"invalid JSON: {exc}", filename=filename, line=line, column=col) from None
    except json.JSONDecodeError as exc:
        raise LoomError(f"invalid JSON: {exc.msg}", filename=filename, line=exc.lineno, column=exc.colno) from None
    except RecursionError:
        pos = _too_deep_at(text) or 0
        line, col = _line_col(text, pos)
        raise LoomError(f"invalid JSON: arrays and objects nest deeper than {MAX_DEPTH} levels",
                        filename=filename, line=line, column=col) from None
    if strict.duplicate is not None:
        target, key = strict.duplicate
        path = _path_of(data, target)
        raise LoomError(f"duplicate key {key!r} in {'the object at ' + path if path else 'the top-level object'} "
                        "(JSON keeps only the last value; remove one)",
                        where=_child(path, key), filename=filename)
    pos = _too_deep_at(text) if _depth(data) > MAX_DEPTH else None
    if pos is not None:
        line, col = _line_col(text, pos)
        raise LoomError(f"invalid JSON: arrays and objects nest deeper than {MAX_DEPTH} levels",
                        filename=filename, line=line, column=col)
    return data


def _depth(value: Any) -> int:
    """Nesting depth of decoded JSON, iteratively; stops counting past MAX_DEPTH."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        v, d = stack.pop()
        if isinstance(v, dict):
            v = list(v.values())
        if isinstance(v, list):
            deepest = max(deepest, d)
            if d > MAX_DEPTH:
                return d
            stack.extend((x, d + 1) for x in v if isinstance(x, (dict, list)))
    return deepest


def check_decoded(value: Any, *, filename: str | None = None) -> None:
    """Depth and finiteness rules for JSON decoded elsewhere (a dict given to ``load_description``)."""
    stack: list[tuple[Any, str, int]] = [(value, "", 1)]
    while stack:
        v, path, d = stack.pop()
        if isinstance(v, float) and not math.isfinite(v):
            raise LoomError(f"expected a finite number, found {v}", where=path or "(top level)", filename=filename)
        if isinstance(v, (dict, list)) and d > MAX_DEPTH:
            raise LoomError(f"arrays and objects nest deeper than {MAX_DEPTH} levels", where=path or "(top level)",
                            filename=filename)
        if isinstance(v, dict):
            for k, x in v.items():
                if not isinstance(k, str):
                    raise LoomError(f"expected string keys (JSON), found {k!r}", where=path or "(top level)",
                                    filename=filename)
                stack.append((x, _child(path, k), d + 1))
        elif isinstance(v, (list, tuple)):
            stack.extend((x, f"{path}[{i}]", d + 1) for i, x in enumerate(v))


def read_json_file(path: str, what: str = "description") -> Any:
    """A JSON file's content under the strict rules; every failure is a LoomError in the file."""
    try:
        with open(path, "rb") as fh:
            raw = fh.read(MAX_FILE_BYTES + 1)  # bounded: a path to /dev/zero must not exhaust memory
    except OSError as exc:
        raise LoomError(f"cannot read the {what}: {exc.strerror or exc}", filename=path) from None
    except ValueError as exc:  # e.g. an embedded NUL byte in the path
        raise LoomError(f"cannot read the {what}: {exc}", filename=repr(path)) from None
    if len(raw) > MAX_FILE_BYTES:
        raise LoomError(f"the {what} is larger than {MAX_FILE_BYTES >> 20} MiB; loom reads small JSON text files",
                        filename=path)
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        start = 3 if raw.startswith(b"\xef\xbb\xbf") else 0
        good = raw[start:exc.start].decode("utf-8")
        line, col = _line_col(good + "?", len(good))
        raise LoomError(f"the file is not UTF-8 text: byte 0x{raw[exc.start]:02x} cannot start or continue "
                        "a UTF-8 character (save the file as UTF-8)", filename=path, line=line, column=col) from None
    return decode_json(text, filename=path)


__all__ = ["decode_json", "read_json_file", "check_decoded", "MAX_DEPTH", "MAX_INT_DIGITS", "MAX_FILE_BYTES"]
