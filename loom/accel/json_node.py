"""A decoded JSON value that knows its path, so every error can say where it is.

``JsonNode(value, "accelerators[0]", filename)`` offers typed accessors
(``string``, ``integer``, ``address``, ``byte_size``...) and ``fields`` (an object
with exactly the allowed keys). Each failure is a ``LoomError`` whose ``where`` is
the JSON path and whose message says what was expected and what was found.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from loom.accel.opcodes import did_you_mean
from loom.errors import LoomError

_SIZE_TEXT = re.compile(r"^\s*([0-9]+)\s*([KMGT](?:B|iB)?)?\s*$", re.IGNORECASE)
_PLAIN_KEY = re.compile(r"[A-Za-z_$][A-Za-z0-9_]*")
_ADDRESS_TEXT = re.compile(r"0[xX][0-9a-fA-F]+|0[oO][0-7]+|0[bB][01]+|[1-9][0-9]*|0")
# size suffixes, any case ("32kb" is 32 KiB: cache sizes are binary), each a power of 1024
_UNITS = {None: 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
_SIZE_HELP = 'bytes, or text with a binary suffix K, M, G or T (also KB/KiB, any case) such as "32KiB" or "512K"'
# Integers in a description are counts, sizes and indices that the generated C and the IR hold in
# 32-bit fields; anything larger is a typo or a fuzzer, never a real accelerator.
INT32_MAX = 2**31 - 1
_JSON_TYPE = {dict: "an object", list: "an array", str: "a string", bool: "a boolean", int: "an integer",
              float: "a number", type(None): "null"}


def _describe(value: Any) -> str:
    if value is None:
        return "null"
    kind = _JSON_TYPE.get(type(value), type(value).__name__)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        shown = _short(value)
    else:
        shown = json.dumps(value) if isinstance(value, (str, bool, type(None))) else ""
    if len(shown) > 40:
        shown = shown[:37] + "..."
    return f"{kind} {shown}".strip()


class JsonNode:
    """A JSON value with its path, so every error can say where it is."""

    def __init__(self, value: Any, path: str, filename: str | None):
        self.value, self.path, self.filename = value, path, filename

    def fail(self, message: str) -> LoomError:
        return LoomError(message, where=self.path or "(top level)", filename=self.filename)

    def expected(self, what: str) -> LoomError:
        return self.fail(f"expected {what}, found {_describe(self.value)}")

    def _sub(self, key: str) -> str:
        if not _PLAIN_KEY.fullmatch(key):
            return f"{self.path}[{json.dumps(key)}]"
        return f"{self.path}.{key}" if self.path else key

    def fields(self, required: tuple[str, ...], optional: tuple[str, ...], what: str) -> dict[str, "JsonNode"]:
        """Check this is an object with exactly those keys; return child nodes."""
        if not isinstance(self.value, dict):
            raise self.expected(f"{what} (a JSON object)")
        allowed = required + optional
        for key in self.value:
            if key not in allowed:
                raise LoomError(
                    f"unknown key {key!r} in {what}{did_you_mean(key, allowed)}; allowed keys: {', '.join(allowed)}",
                    where=self._sub(key), filename=self.filename)
        for key in required:
            if key not in self.value:
                raise self.fail(f"missing required key {key!r} in {what}")
        return {k: JsonNode(v, self._sub(k), self.filename) for k, v in self.value.items()}

    def items(self, what: str, *, non_empty: bool = False, limit: int | None = None) -> list["JsonNode"]:
        if not isinstance(self.value, list):
            raise self.expected(f"{what} (a JSON array)")
        if non_empty and not self.value:
            raise self.fail(f"expected at least one entry in {what.replace('a list of', 'the list of', 1)}, "
                            "found an empty array")
        if limit is not None and len(self.value) > limit:
            raise self.fail(f"expected at most {limit} {what.removeprefix('a list of ')}, found {len(self.value)}")
        return [JsonNode(v, f"{self.path}[{i}]", self.filename) for i, v in enumerate(self.value)]

    def entries(self, what: str, *, limit: int | None = None) -> list[tuple[str, "JsonNode"]]:
        if not isinstance(self.value, dict):
            raise self.expected(f"{what} (a JSON object)")
        if limit is not None and len(self.value) > limit:
            raise self.fail(f"expected at most {limit} entries in {what}, found {len(self.value)}")
        return [(k, JsonNode(v, self._sub(k), self.filename)) for k, v in self.value.items()]

    def string(self, what: str = "a string") -> str:
        if not isinstance(self.value, str):
            raise self.expected(what)
        return self.value

    def text(self) -> str:
        """Free text: a string or a list of strings (joined by newlines)."""
        if isinstance(self.value, list) and all(isinstance(v, str) for v in self.value):
            return "\n".join(self.value)
        return self.string("a string or a list of strings")

    def boolean(self) -> bool:
        if not isinstance(self.value, bool):
            raise self.expected("true or false")
        return self.value

    def whole_number(self) -> int | None:
        """The value as an int when it is a JSON integer: ``4``, and also ``4.0``, ``1e3`` and ``-0``
        (JSON has one number type; JSON Schema's "integer" accepts a zero fraction), else None."""
        value = self.value
        if isinstance(value, bool):
            return None
        if isinstance(value, int):
            return value
        if isinstance(value, float) and math.isfinite(value) and value == int(value):
            return int(value)
        return None

    def integer(self, what: str = "an integer", *, minimum: int | None = None, maximum: int = INT32_MAX) -> int:
        value = self.whole_number()
        if value is None:
            raise self.expected(what)
        if minimum is not None and value < minimum:
            raise self.fail(f"expected {what} >= {minimum}, found {value}")
        if value > maximum:
            raise self.fail(f"expected {what} <= {maximum}, found {_short(value)}")
        return value

    def number(self, what: str, *, minimum: float = 0.0, strict: bool = True, maximum: float = 1e12) -> float:
        """A finite JSON number in ``(minimum, maximum]`` (``[minimum, ...]`` when not ``strict``)."""
        value = self.value
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self.expected(what)
        if not math.isfinite(value):
            raise self.fail(f"expected {what} (a finite number), found {value}")
        if value < minimum or (strict and value == minimum):
            raise self.fail(f"expected {what} {'>' if strict else '>='} {minimum:g}, found {_short(value)}")
        if value > maximum:
            raise self.fail(f"expected {what} <= {maximum:g}, found {_short(value)}")
        return value

    def address(self) -> int:
        """An address: a non-negative integer or a ``0x`` hex string, fitting in 32 bits."""
        value: int | None = self.value
        if isinstance(self.value, str):
            text = self.value.strip()
            if not _ADDRESS_TEXT.fullmatch(text):
                raise self.expected("an address (an integer or a hex string like \"0x40400000\")")
            value = int(text, 0) if len(text) <= 40 else 2**160
        else:
            value = self.whole_number()
            if value is None:
                raise self.expected("an address (an integer or a hex string like \"0x40400000\")")
        if not 0 <= value < 2**32:
            raise self.fail(f"expected a 32-bit address, found {_short(value)}")
        return value

    def byte_size(self, what: str, *, maximum: int = 2**48) -> int:
        """A size in bytes: an integer or ``"32KiB"``-style text, at most ``maximum``."""
        value: int | None
        if isinstance(self.value, str):
            m = _SIZE_TEXT.match(self.value)
            if not m:
                raise self.expected(f"{what} ({_SIZE_HELP})")
            unit = m.group(2)[0].upper() if m.group(2) else None
            value = int(m.group(1)) * _UNITS[unit] if len(m.group(1)) <= 40 else 2**160
        else:
            value = self.whole_number()
            if value is None:
                raise self.expected(f"{what} ({_SIZE_HELP})")
        if value <= 0:
            raise self.fail(f"expected {what} > 0, found {value}")
        if value > maximum:
            raise self.fail(f"expected {what} <= {maximum} bytes, found {_short(value)}")
        return value


def _short(value: int | float) -> str:
    """A number for a message: huge ones abbreviated (a 40-digit literal helps nobody)."""
    text = str(value)
    return text if len(text) <= 24 else f"{text[:8]}...({len(text)} digits)"
