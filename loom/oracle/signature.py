"""Read function signatures out of MLIR generic-form text.

``mlir-opt --mlir-print-op-generic`` prints every function as
``"func.func"() <{function_type = (A, B) -> R, sym_name = "f"}>``; this module
finds those and turns the type strings into small descriptors (shape, element
type, numpy dtype) that the run harness needs. Only the types the harness can
materialise are understood: memrefs (ranked, static or dynamic dims, or
unranked) of int/float/index/i1 elements, and scalars of those types.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from loom.core.scalars import SCALARS, Scalar
from loom.errors import LoomError

# MLIR element type -> numpy dtype of its in-memory representation: every core
# scalar stored in its own width (bf16 needs a 2-byte buffer numpy does not have).
ELEMENT_DTYPES: dict[str, np.dtype] = {s.mlir: s.dtype for s in SCALARS.values() if s.stored_as is None}


@dataclass(frozen=True)
class ScalarType:
    """A scalar parameter / result type: a view over the core scalar of its spelling."""

    core: Scalar

    @property
    def text(self) -> str:  # MLIR spelling, e.g. "f32", "index"
        return self.core.mlir

    @property
    def dtype(self) -> np.dtype:
        return self.core.dtype


@dataclass(frozen=True)
class MemRefType:
    text: str  # full MLIR spelling, e.g. "memref<?x4xf32>"
    shape: tuple[int | None, ...] | None  # None dims are dynamic; None shape = unranked
    element: ScalarType
    has_layout: bool  # a layout/memory-space suffix follows the element type


@dataclass(frozen=True)
class FuncSignature:
    name: str
    inputs: tuple[ScalarType | MemRefType, ...]
    results: tuple[ScalarType | MemRefType, ...]


_OPEN = "(<[{"
_CLOSE = ")>]}"


def split_top_level(text: str, sep: str = ",") -> list[str]:
    """Split at ``sep`` outside any bracket; ``->`` is not a closing ``>``."""
    parts, depth, start, i = [], 0, 0, 0
    while i < len(text):
        ch = text[i]
        if text.startswith("->", i):
            i += 2
            continue
        if ch == '"':  # skip quoted strings (e.g. in opaque types)
            i = text.index('"', i + 1) + 1
            continue
        if ch in _OPEN:
            depth += 1
        elif ch in _CLOSE:
            depth -= 1
        elif ch == sep and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
        i += 1
    tail = text[start:].strip()
    if tail or parts:
        parts.append(tail)
    return parts


# "4x?x" prefix of dimensions, then the element type (which may contain an x: index)
_DIMS = re.compile(r"^((?:(?:\d+|\?)x)*)(\w+)$")


def parse_type(text: str, where: str) -> ScalarType | MemRefType:
    text = text.strip()
    if text in ELEMENT_DTYPES:
        return ScalarType(SCALARS[text])
    if text.startswith("memref<") and text.endswith(">"):
        pieces = split_top_level(text[len("memref<") : -1])
        dims_and_elem = pieces[0]
        if dims_and_elem.startswith("*x"):
            shape, elem = None, dims_and_elem[2:]
        else:
            match = _DIMS.match(dims_and_elem)
            if match is None:
                raise LoomError(
                    f"memref type {text} is not supported by the oracle (expected static/dynamic dims and "
                    f"one of {', '.join(ELEMENT_DTYPES)})",
                    where=where,
                )
            dims = match.group(1).split("x")[:-1]
            shape, elem = tuple(None if d == "?" else int(d) for d in dims), match.group(2)
        if elem not in ELEMENT_DTYPES:
            raise LoomError(
                f"memref element type {elem!r} of {text} is not supported by the oracle "
                f"(supported: {', '.join(ELEMENT_DTYPES)})",
                where=where,
            )
        return MemRefType(text, shape, ScalarType(SCALARS[elem]), len(pieces) > 1)
    raise LoomError(
        f"type {text} is not supported by the oracle (supported: memrefs and scalars of "
        f"{', '.join(ELEMENT_DTYPES)})",
        where=where,
    )


def _type_list(text: str) -> list[str]:
    text = text.strip()
    if text.startswith("(") and text.endswith(")") and _matching_paren(text) == len(text) - 1:
        return split_top_level(text[1:-1])
    return [text]


def _matching_paren(text: str) -> int:
    depth = 0
    for i, ch in enumerate(text):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                return i
    return -1


_FUNC_LINE = re.compile(r'"func\.func"\(\) <\{(.*)\}>')
_SYM_NAME = re.compile(r'\bsym_name = "((?:[^"\\]|\\.)*)"')


def _function_type(props: str) -> str | None:
    """The value of ``function_type = ...`` inside a property dictionary."""
    for item in split_top_level(props):
        key, _, value = item.partition(" = ")
        if key.strip() == "function_type":
            return value
    return None


def function_symbols(generic_text: str) -> dict[str, str]:
    """Map each func.func symbol name to its function type string."""
    found = {}
    for line in generic_text.splitlines():
        match = _FUNC_LINE.search(line)
        if not match:
            continue
        props = match.group(1)
        name = _SYM_NAME.search(props)
        ftype = _function_type(props)
        if name and ftype:
            found[name.group(1)] = ftype
    return found


def find_signature(generic_text: str, func_name: str) -> FuncSignature:
    functions = function_symbols(generic_text)
    if func_name not in functions:
        known = ", ".join(sorted(functions)) or "none"
        raise LoomError(f"no func.func named @{func_name} in the module (functions: {known})", where=f"@{func_name}")
    ftype = functions[func_name]
    arrow = _arrow_position(ftype)
    if arrow < 0:
        raise LoomError(f"cannot read function type {ftype}", where=f"@{func_name}")
    inputs = [t for t in _type_list(ftype[:arrow]) if t]
    results = [t for t in _type_list(ftype[arrow + 2 :]) if t]
    return FuncSignature(
        func_name,
        tuple(parse_type(t, f"@{func_name} argument {i}") for i, t in enumerate(inputs)),
        tuple(parse_type(t, f"@{func_name} result {i}") for i, t in enumerate(results)),
    )


def _arrow_position(ftype: str) -> int:
    """Index of the top-level ``->`` of a function type."""
    depth = 0
    for i, ch in enumerate(ftype):
        if ftype.startswith("->", i) and depth == 0:
            return i
        if ch in "(<[{" :
            depth += 1
        elif ch in ")]}" or (ch == ">" and ftype[i - 1] != "-"):
            depth -= 1
    return -1
