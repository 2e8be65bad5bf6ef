"""The opcode grammar of AXI4MLIR accelerator descriptions: parse and print.

Two small languages (paper Fig. 7 and 8)::

    opcode_map  ::= [`opcode_map` `<`] entry (`,` entry)* [`>`]
    entry       ::= (bare_id | string_literal) `=` `[` action (`,` action)* `]`
    action      ::= `send` `(` N `)`            -- copy the tile of operand N
                  | `send_literal` `(` INT `)`  -- one literal 32-bit word (an opcode)
                  | `send_dim` `(` N `,` D `)`  -- the size of dimension D of operand N's tile
                  | `send_idx` `(` N `,` D `)`  -- the index (offset) of that tile along dimension D
                  | `recv` `(` N [`,` MODE] `)` -- receive the tile of operand N; MODE is
                                                   `accumulate` or `replace`
    opcode_flow ::= [`opcode_flow` `<`] scope [`>`]
    scope       ::= `(` item (` ` item)* `)` ;  item ::= opcode_id | scope

``INT`` is decimal or ``0x`` hexadecimal, optionally negative, and must fit in a
32-bit word: -2**31 .. 2**32 - 1, a negative literal being sent in two's complement
(``send_literal(-1)`` is the word 0xFFFFFFFF). Parentheses in a flow are loop scopes (see ``loom.accel.validate``).

Every syntax error is a ``LoomError`` whose ``column`` (1-based) points at the
offending character; the message repeats the text with a caret under it.
The printers produce the canonical spelling (``s=[send(0), recv(2)]``, hex literals
kept as hex) and ``parse(print(x)) == x`` for every AST.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Iterator, Union

from loom.core.text import TextCursor, did_you_mean, located_error, memoized_parser  # noqa: F401  (re-exported)
from loom.errors import LoomError  # noqa: F401  (re-exported)

RECV_MODES = ("accumulate", "replace")
ACTION_NAMES = ("send", "send_literal", "send_dim", "send_idx", "recv")
_WORD_MIN, _WORD_MAX = -(2**31), 2**32 - 1
_BARE_ID = re.compile(r"[A-Za-z_][A-Za-z0-9_$.]*")
_INT = re.compile(r"-?(0[xX][0-9a-fA-F]+|[0-9]+)")
_ID_DELIMITERS = '()=[],<>"'  # what may follow an id in a map or a flow
# A flow nests one scope per tile loop; kernels have a handful of dims. The bound keeps the
# recursive-descent parser (and everything walking the scope tree) far from Python's stack limit.
MAX_FLOW_DEPTH = 32
MAX_OPCODES = 256  # entries of a map, actions of an entry, ids of a flow: far above real accelerators


# ----------------------------------------------------------------------------- AST
@dataclass(frozen=True)
class Send:
    """Copy the current tile of operand ``operand`` into the input staging buffer."""

    operand: int
    column: int = field(default=0, compare=False)


@dataclass(frozen=True)
class SendLiteral:
    """Send one literal word; ``hex`` only remembers the spelling for printing."""

    value: int
    hex: bool = field(default=False, compare=False)
    column: int = field(default=0, compare=False)


@dataclass(frozen=True)
class SendDim:
    """Send the size of dimension ``dim`` of operand ``operand``'s tile as one word."""

    operand: int
    dim: int
    column: int = field(default=0, compare=False)


@dataclass(frozen=True)
class SendIdx:
    """Send the start index of operand ``operand``'s tile along dimension ``dim``."""

    operand: int
    dim: int
    column: int = field(default=0, compare=False)


@dataclass(frozen=True)
class Recv:
    """Receive the tile of operand ``operand``; ``mode`` None means "use the flow's default"."""

    operand: int
    mode: str | None = None
    column: int = field(default=0, compare=False)


Action = Union[Send, SendLiteral, SendDim, SendIdx, Recv]


@dataclass(frozen=True)
class OpcodeEntry:
    id: str
    actions: tuple[Action, ...]
    column: int = field(default=0, compare=False)


@dataclass(frozen=True)
class OpcodeMap:
    entries: tuple[OpcodeEntry, ...]

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(e.id for e in self.entries)

    def __contains__(self, opcode_id: str) -> bool:
        return any(e.id == opcode_id for e in self.entries)

    def __getitem__(self, opcode_id: str) -> OpcodeEntry:
        for e in self.entries:
            if e.id == opcode_id:
                return e
        raise KeyError(opcode_id)


@dataclass(frozen=True)
class FlowId:
    name: str
    column: int = field(default=0, compare=False)


@dataclass(frozen=True)
class FlowScope:
    """One parenthesised group: a loop scope holding opcode ids and nested scopes."""

    items: tuple[Union[FlowId, "FlowScope"], ...]
    column: int = field(default=0, compare=False)

    def ids(self) -> Iterator[FlowId]:
        """Every opcode id in textual order."""
        for item in self.items:
            if isinstance(item, FlowId):
                yield item
            else:
                yield from item.ids()

    @property
    def depth(self) -> int:
        """Nesting depth: ``(a)`` is 1, ``(a (b))`` is 2."""
        return 1 + max((i.depth for i in self.items if isinstance(i, FlowScope)), default=0)


# -------------------------------------------------------------------------- errors
# -------------------------------------------------------------------------- parser
class TextReader(TextCursor):
    """The core text cursor plus the tokens of the opcode languages (ids, strings, words)."""

    def bare_id(self) -> str | None:
        return self.match(_BARE_ID)

    def opcode_id(self) -> str | None:
        """A quoted or bare id. A bare id running on through another character into more of an id
        (``mac-a-b``) is refused with the quoted spelling, rather than as the stray character alone."""
        name = self.string_literal()
        if name is not None:
            return name
        start = self.pos
        name = self.bare_id()
        if name is not None and _BARE_ID.match(self.text, self.pos + 1) \
                and not self.text[self.pos].isspace() and self.text[self.pos] not in _ID_DELIMITERS:
            end = start
            while end < len(self.text) and not self.text[end].isspace() and self.text[end] not in _ID_DELIMITERS:
                end += 1
            word = self.text[start:end]
            raise self.fail(f"opcode id {name!r} runs on into {self.text[self.pos]!r}: a bare id has letters, digits, "
                            f"'_', '$' and '.' only; write {word!r} in double quotes (\"{word}\"), in the opcode map "
                            "and in the flows", self.pos)
        return name

    def string_literal(self) -> str | None:
        self.skip_space()
        if self.peek() != '"':
            return None
        start = self.pos
        end = self.text.find('"', start + 1)
        if end < 0:
            raise self.fail("unterminated string literal", start)
        if end == start + 1:
            raise self.fail("an opcode id cannot be the empty string", start)
        self.pos = end + 1
        return self.text[start + 1 : end]

    def integer(self, what: str) -> tuple[int, bool]:
        self.skip_space()
        m = _INT.match(self.text, self.pos)
        if not m or (m.end() < len(self.text) and (self.text[m.end()].isalnum() or self.text[m.end()] == "_")):
            raise self.fail(f"expected {what} (an integer) but found {self.found()}")
        if len(m.group()) > 24:  # no 32-bit word needs more; int() refuses > 4300 digits anyway
            raise self.fail(f"expected {what} that fits in 32 bits, found an integer of {len(m.group())} characters")
        self.pos = m.end()
        token = m.group()
        is_hex = "x" in token.lower()
        # explicit bases: int(token, 0) refuses leading zeros ("007"), which are plain decimal here
        sign, digits = (-1, token[1:]) if token.startswith("-") else (1, token)
        return sign * (int(digits[2:], 16) if is_hex else int(digits, 10)), is_hex

    def wrapper(self, keyword: str) -> bool:
        """Consume an optional ``keyword<`` prefix; True when it was present."""
        self.skip_space()
        start = self.pos
        if self.bare_id() == keyword and self.accept("<"):
            return True
        self.pos = start
        return False


def _index(reader: TextReader, what: str) -> int:
    start = reader.pos
    value, _ = reader.integer(what)
    if value < 0:
        raise reader.fail(f"expected {what} >= 0 but found {value}", start)
    return value


def _parse_action(reader: TextReader) -> Action:
    reader.skip_space()
    start = reader.pos
    column = start + 1
    name = reader.bare_id()
    if name is None:
        raise reader.fail(f"expected an action ({', '.join(ACTION_NAMES)}) but found {reader.found()}")
    if name not in ACTION_NAMES:
        raise reader.fail(
            f"unknown action {name!r}; expected one of {', '.join(ACTION_NAMES)}{did_you_mean(name, ACTION_NAMES)}",
            start,
        )
    reader.expect("(")
    if name == "send_literal":
        lit_start = reader.pos
        value, is_hex = reader.integer("a literal word")
        if not _WORD_MIN <= value <= _WORD_MAX:
            raise reader.fail(f"literal {value} does not fit in a 32-bit word (expected {_WORD_MIN} .. {_WORD_MAX} "
                              "= 0xFFFFFFFF; a negative literal is sent in two's complement: -1 is 0xFFFFFFFF)",
                              lit_start)
        action: Action = SendLiteral(value, hex=is_hex, column=column)
    elif name in ("send_dim", "send_idx"):
        operand = _index(reader, "an operand index")
        reader.expect(",", f"',' and a dimension index after {name}'s operand")
        dim = _index(reader, "a dimension index")
        action = (SendDim if name == "send_dim" else SendIdx)(operand, dim, column=column)
    elif name == "recv":
        operand = _index(reader, "an operand index")
        mode = None
        if reader.accept(","):
            mode_start = reader.pos
            reader.skip_space()
            mode_start = reader.pos
            mode = reader.bare_id()
            if mode not in RECV_MODES:
                got = repr(mode) if mode else reader.found()
                raise reader.fail(
                    f"expected a recv mode ({' or '.join(RECV_MODES)}) but found {got}"
                    + (did_you_mean(mode, RECV_MODES) if mode else ""),
                    mode_start,
                )
        action = Recv(operand, mode, column=column)
    else:
        action = Send(_index(reader, "an operand index"), column=column)
    reader.expect(")", f"')' to close {name}(")
    return action


@memoized_parser
def parse_opcode_map(text: str, *, where: str | None = None, filename: str | None = None) -> OpcodeMap:
    """Parse ``opcode_map<id=[action, ...], ...>`` (the ``opcode_map<...>`` wrapper is optional)."""
    reader = TextReader(text, where, filename)
    wrapped = reader.wrapper("opcode_map")
    entries: list[OpcodeEntry] = []
    seen: dict[str, int] = {}
    while True:
        reader.skip_space()
        start = reader.pos
        key = reader.opcode_id()
        if key is None:
            raise reader.fail(f"expected an opcode id but found {reader.found()}")
        if key in seen:
            raise reader.fail(f"duplicate opcode id {key!r} (first defined at column {seen[key]})", start)
        seen[key] = start + 1
        reader.expect("=", f"'=' after opcode id {key!r}")
        reader.expect("[", f"'[' to start the action list of {key!r}")
        actions = [_parse_action(reader)]
        while reader.accept(","):
            if len(actions) == MAX_OPCODES:
                raise reader.fail(f"opcode {key!r} has more than {MAX_OPCODES} actions")
            actions.append(_parse_action(reader))
        reader.expect("]", "',' or ']'")
        entries.append(OpcodeEntry(key, tuple(actions), column=start + 1))
        if not reader.accept(","):
            break
        if len(entries) == MAX_OPCODES:
            raise reader.fail(f"the opcode map has more than {MAX_OPCODES} entries")
    if wrapped:
        reader.expect(">", "',' or '>' to close opcode_map<")
    if not reader.at_end():
        raise reader.fail(f"expected ',' or the end of the opcode map but found {reader.found()}")
    return OpcodeMap(tuple(entries))


def _parse_scope(reader: TextReader, depth: int = 1) -> FlowScope:
    reader.skip_space()
    start = reader.pos
    if depth > MAX_FLOW_DEPTH:
        raise reader.fail(f"the flow nests more than {MAX_FLOW_DEPTH} scopes (one scope per tile loop)")
    reader.expect("(", "'(' to open a flow scope")
    items: list[FlowId | FlowScope] = []
    while True:
        ch = reader.peek()
        if ch == ")":
            if not items:
                raise reader.fail("empty flow scope '()': a scope needs at least one opcode id")
            reader.pos += 1
            return FlowScope(tuple(items), column=start + 1)
        if ch == "(":
            items.append(_parse_scope(reader, depth + 1))
            continue
        id_start = reader.pos
        name = reader.opcode_id()
        if name is None:
            what = "the end of the text (missing ')')" if not ch else repr(ch)
            raise reader.fail(f"expected an opcode id, '(' or ')' but found {what}")
        items.append(FlowId(name, column=id_start + 1))
        if len(items) > MAX_OPCODES:
            raise reader.fail(f"a flow scope lists more than {MAX_OPCODES} opcodes", id_start)


@memoized_parser
def parse_opcode_flow(
    text: str, *, where: str | None = None, filename: str | None = None, keyword: str = "opcode_flow"
) -> FlowScope:
    """Parse ``opcode_flow<(a (b c) d)>`` (the wrapper is optional) into its outermost scope.

    ``keyword`` names the optional wrapper (``init_opcodes<(reset)>`` uses the same grammar).
    """
    reader = TextReader(text, where, filename)
    wrapped = reader.wrapper(keyword)
    scope = _parse_scope(reader)
    if wrapped:
        reader.expect(">", f"'>' to close {keyword}<")
    if not reader.at_end():
        raise reader.fail(f"expected the end of the flow after its outermost ')' but found {reader.found()}")
    return scope


# ------------------------------------------------------------------------- printers
def _print_id(name: str) -> str:
    return name if _BARE_ID.fullmatch(name) else f'"{name}"'


def print_action(action: Action) -> str:
    if isinstance(action, SendLiteral):
        v = action.value
        lit = (f"-0x{-v:x}" if v < 0 else f"0x{v:x}") if action.hex else str(v)
        return f"send_literal({lit})"
    if isinstance(action, SendDim):
        return f"send_dim({action.operand}, {action.dim})"
    if isinstance(action, SendIdx):
        return f"send_idx({action.operand}, {action.dim})"
    if isinstance(action, Recv):
        return f"recv({action.operand}, {action.mode})" if action.mode else f"recv({action.operand})"
    return f"send({action.operand})"


def print_opcode_entry(entry: OpcodeEntry) -> str:
    return f"{_print_id(entry.id)}=[{', '.join(print_action(a) for a in entry.actions)}]"


def print_opcode_map(opcode_map: OpcodeMap, *, wrapped: bool = True) -> str:
    body = ", ".join(print_opcode_entry(e) for e in opcode_map.entries)
    return f"opcode_map<{body}>" if wrapped else body


def print_opcode_flow(scope: FlowScope, *, wrapped: bool = False) -> str:
    def scope_text(s: FlowScope) -> str:
        return "(" + " ".join(_print_id(i.name) if isinstance(i, FlowId) else scope_text(i) for i in s.items) + ")"

    text = scope_text(scope)
    return f"opcode_flow<{text}>" if wrapped else text
