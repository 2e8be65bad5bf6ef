"""argparse types for numeric flags: a bad value is a usage error naming the flag, not a traceback later."""

from __future__ import annotations

import argparse
import re

from loom.errors import LoomError


def non_negative_int(text: str) -> int:
    value = _int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a non-negative integer, got {text!r}")
    return value


def positive_int(text: str) -> int:
    value = _int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def _int(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None


def parse_dims(text: str) -> dict[str, int]:
    """``M=64,N=32`` -> {"M": 64, "N": 32}; a bad item is a LoomError naming it."""
    from loom.dialects.dims import parse_dims as parse

    return parse(text, where="--dims")


def parse_size(text: str) -> tuple[int, int]:
    m = re.fullmatch(r"\s*(\d+)\s*[xX]\s*(\d+)\s*", text or "")
    if not m or int(m.group(1)) < 1 or int(m.group(2)) < 1:
        raise LoomError(f"bad --size '{text}': expected WxH with positive integers, e.g. 64x48", where="--size")
    return int(m.group(1)), int(m.group(2))
