"""Tokens of EKL.

Literals: index literals ``_60`` (underscore then digits), decimal numbers
(``109663.32``, ``1e-3``, ``.5``), binary rationals ``MpE`` = M * 2**E (``1p-51``),
hexadecimal floats (``0x1.8p3``),
strings, ``true``/``false``. Comments ``//`` and ``/* */``. Multi-character
operators: ``...  <:  !>  ||  &&  ==  ~=  <=  >=``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction

from loom.frontends.ekl.source import Loc, Source

KEYWORDS = frozenset(
    "type const static local import export kernel let in out inout if then else true false".split()
)
_MULTI = ("...", "<:", "!>", "||", "&&", "==", "~=", "<=", ">=")
_SINGLE = set("{}()[];:=&,?+-*/%^~#><!")

_SPACE = re.compile(r"\s+|//[^\n]*|/\*.*?\*/", re.S)
_INDEX = re.compile(r"_[0-9]+(?![A-Za-z0-9_$])")
_DECFLOAT = re.compile(r"(?:[0-9]+\.[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_DECEXP = re.compile(r"[0-9]+[eE][+-]?[0-9]+")
_BINRAT = re.compile(r"[0-9]+(?:[pP][+-]?[0-9]+)?")
_HEXFLOAT = re.compile(r"0[xX][0-9a-fA-F]+(?:\.[0-9a-fA-F]*)?(?:[pP][+-]?[0-9]+)?")
_IDENT = re.compile(r"[$_A-Za-z][$_A-Za-z0-9]*")
_STRING = re.compile(r'"(?:\\.|[^\\"\n])*"')


@dataclass(frozen=True)
class Token:
    kind: str  # "id", "kw", "index", "number", "string", "op", "end"
    text: str
    loc: Loc
    value: object = None


def _position(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    start = text.rfind("\n", 0, offset) + 1
    return line, offset - start + 1


def tokenize(source: Source) -> list[Token]:
    text = source.text
    tokens: list[Token] = []
    pos = 0
    n = len(text)
    while True:
        while pos < n:
            m = _SPACE.match(text, pos)
            if not m:
                if text.startswith("/*", pos):
                    raise Loc(source, *_position(text, pos)).error("unterminated comment '/*'")
                break
            pos = m.end()
        loc = Loc(source, *_position(text, pos))
        if pos >= n:
            tokens.append(Token("end", "", loc))
            return tokens
        if m := _HEXFLOAT.match(text, pos):
            digits = m.group() if "p" in m.group().lower() else m.group() + "p0"
            tokens.append(Token("number", m.group(), loc, float.fromhex(digits)))
        elif m := _INDEX.match(text, pos):
            tokens.append(Token("index", m.group(), loc, int(m.group()[1:])))
        elif m := (_DECFLOAT.match(text, pos) or _DECEXP.match(text, pos)):
            tokens.append(Token("number", m.group(), loc, float(m.group())))
        elif m := _BINRAT.match(text, pos):
            mant, _, exp = m.group().lower().partition("p")
            value = Fraction(int(mant)) * Fraction(2) ** int(exp or 0)
            tokens.append(Token("number", m.group(), loc, float(value)))
        elif m := _IDENT.match(text, pos):
            word = m.group()
            tokens.append(Token("kw" if word in KEYWORDS else "id", word, loc))
        elif m := _STRING.match(text, pos):
            tokens.append(Token("string", m.group(), loc, m.group()[1:-1]))
        else:
            for op in _MULTI:
                if text.startswith(op, pos):
                    tokens.append(Token("op", op, loc))
                    break
            else:
                ch = text[pos]
                if ch not in _SINGLE:
                    raise loc.error(f"unknown character {ch!r}")
                tokens.append(Token("op", ch, loc))
        pos += len(tokens[-1].text)
