"""ctypes declarations generated from ``dma_runtime.h``: the header is the one truth of the ABI.

``parse_header(text)`` reads the C subset the header uses: comments, preprocessor
lines (``#ifdef __cplusplus`` blocks are dropped), enums (skipped),
``typedef struct name { T a, b; ... } name;`` (a struct with a function-pointer
field is opaque: only pointers to it cross into Python, as ``c_void_p``) and
function prototypes ``[LOOM_API] T name(T a, ...);`` with the scalar types of
``<stdint.h>``, ``int``, ``double``, ``char`` and pointers to these or to the
structs. Anything else is a ``LoomError`` naming the header line, so an edit to
the header either shows up in Python or fails loudly.
"""

from __future__ import annotations

import ctypes
import re
from dataclasses import dataclass, field
from pathlib import Path

from loom.errors import LoomError

SCALARS: dict[str, object] = {
    "void": None, "char": ctypes.c_char, "int": ctypes.c_int, "unsigned": ctypes.c_uint,
    "float": ctypes.c_float, "double": ctypes.c_double, "size_t": ctypes.c_size_t,
    "intptr_t": ctypes.c_ssize_t, "int8_t": ctypes.c_int8, "int16_t": ctypes.c_int16,
    "int32_t": ctypes.c_int32, "int64_t": ctypes.c_int64, "uint8_t": ctypes.c_uint8,
    "uint16_t": ctypes.c_uint16, "uint32_t": ctypes.c_uint32, "uint64_t": ctypes.c_uint64,
}
ATTRIBUTE_MACROS = {"LOOM_API"}  # expand to visibility attributes only


@dataclass
class Prototype:
    name: str
    restype: object
    argtypes: list[object]
    line: int


@dataclass
class HeaderABI:
    structs: dict[str, type[ctypes.Structure]] = field(default_factory=dict)
    opaque: set[str] = field(default_factory=set)
    functions: dict[str, Prototype] = field(default_factory=dict)

    def declare(self, lib: ctypes.CDLL) -> ctypes.CDLL:
        """Set restype/argtypes of every function of the header on ``lib``."""
        for proto in self.functions.values():
            fn = getattr(lib, proto.name)
            fn.restype, fn.argtypes = proto.restype, proto.argtypes
        return lib


def _strip(text: str) -> str:
    """Comments and preprocessor lines become blanks (newlines kept, so line numbers hold)."""
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    out, skipping = [], 0
    lines = text.split("\n")
    k = 0
    while k < len(lines):
        line = lines[k]
        directive = line.strip().startswith("#")
        if directive:
            words = line.strip()[1:].split()
            head = words[0] if words else ""
            if head in ("ifdef", "if") and "__cplusplus" in line or skipping and head.startswith("if"):
                skipping += 1
            elif skipping and head == "endif":
                skipping -= 1
            while lines[k].rstrip().endswith("\\"):  # continued directive
                out.append("")
                k += 1
        out.append("" if directive or skipping else line)
        k += 1
    return "\n".join(out)


def _statements(text: str) -> list[tuple[str, int]]:
    """Top-level declarations (split at ';' outside braces) with their first line."""
    result, depth, start = [], 0, 0
    for k, ch in enumerate(text):
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        elif ch == ";" and depth == 0:
            chunk = text[start:k]
            if chunk.strip():
                lead = len(chunk) - len(chunk.lstrip())
                result.append((" ".join(chunk.split()), text.count("\n", 0, start + lead) + 1))
            start = k + 1
    return result


class _Parser:
    def __init__(self, filename: str):
        self.filename = filename
        self.abi = HeaderABI()

    def error(self, line: int, message: str) -> LoomError:
        return LoomError(message, filename=self.filename, line=line)

    def ctype(self, decl: str, line: int, argument: bool) -> object:
        """ctypes type of a declaration's type part (``const char *``, ``uint32_t *`` ...)."""
        stars = decl.count("*")
        words = [w for w in decl.replace("*", " ").split() if w not in ("const", "struct")]
        if len(words) != 1:
            raise self.error(line, f"unsupported type '{decl.strip()}' in the runtime header")
        base = words[0]
        if stars == 0:
            if base in SCALARS and (base != "void" or not argument):
                return SCALARS[base]
            raise self.error(line, f"unsupported by-value type '{base}' in the runtime header")
        if stars == 1 and base == "char":
            return ctypes.c_char_p
        if base == "void" or base in self.abi.opaque:
            target: object = ctypes.c_void_p
            stars -= 1
        elif base in self.abi.structs:
            target = self.abi.structs[base]
        elif base in SCALARS:
            target = SCALARS[base]
        else:
            raise self.error(line, f"unknown type '{base}' in the runtime header")
        for _ in range(stars):
            target = ctypes.POINTER(target)  # type: ignore[arg-type]
        return target

    def struct(self, stmt: str, line: int) -> None:
        m = re.fullmatch(r"typedef struct (\w+) \{(.*)\} (\w+)", stmt)
        if not m or m.group(1) != m.group(3):
            raise self.error(line, f"unsupported typedef '{stmt[:60]}' (expected typedef struct N {{...}} N)")
        name, body = m.group(1), m.group(2)
        fields: list[tuple[str, object]] = []
        for member in filter(None, (f.strip() for f in body.split(";"))):
            if "(" in member:  # function pointer: the struct stays opaque to Python
                self.abi.opaque.add(name)
                return
            m2 = re.fullmatch(r"([\w\s]+?)\s*((?:\**\s*\w+\s*,\s*)*\**\s*\w+)", member)
            if not m2:
                raise self.error(line, f"unsupported field '{member}' in struct {name}")
            base = m2.group(1)
            for declarator in m2.group(2).split(","):
                declarator = declarator.strip()
                stars = declarator.count("*")
                fields.append((declarator.strip("* "), self.ctype(base + " " + "*" * stars, line, False)))
        self.abi.structs[name] = type(name, (ctypes.Structure,), {"_fields_": fields})

    def function(self, stmt: str, line: int) -> None:
        words = [w for w in stmt.split() if w not in ATTRIBUTE_MACROS]
        m = re.fullmatch(r"(.+?)\b(\w+)\s*\((.*)\)", " ".join(words))
        if not m:
            raise self.error(line, f"unsupported declaration '{stmt[:60]}' in the runtime header")
        restype = self.ctype(m.group(1), line, False)
        params = m.group(3).strip()
        args = []
        if params != "void":
            for param in params.split(","):
                pm = re.fullmatch(r"(.*?[\s*])(\w+)", param.strip())
                if not pm:
                    raise self.error(line, f"parameter '{param.strip()}' of {m.group(2)} needs a type and a name")
                args.append(self.ctype(pm.group(1), line, True))
        self.abi.functions[m.group(2)] = Prototype(m.group(2), restype, args, line)

    def parse(self, text: str) -> HeaderABI:
        for stmt, line in _statements(_strip(text)):
            if stmt.startswith("enum ") or stmt == "}":
                continue
            if stmt.startswith("typedef struct"):
                self.struct(stmt, line)
            elif stmt.startswith("typedef"):
                raise self.error(line, f"unsupported typedef '{stmt[:60]}' in the runtime header")
            else:
                self.function(stmt, line)
        return self.abi


def parse_header(text: str, filename: str = "<header>") -> HeaderABI:
    return _Parser(filename).parse(text)


_CACHE: dict[Path, tuple[bytes, HeaderABI]] = {}


def header_abi(path: Path) -> HeaderABI:
    """The parsed header (parsed once per content)."""
    data = path.read_bytes()
    hit = _CACHE.get(path)
    if hit is None or hit[0] != data:
        hit = (data, parse_header(data.decode(), str(path)))
        _CACHE[path] = hit
    return hit[1]
