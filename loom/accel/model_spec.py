"""The ``"model"`` entry of an accelerator: which behaviour model simulates it.

Forms (``loom/accel/FORMAT.md``, "Behaviour models"):

* ``"generic"``: loom's generic model computes the described kernel on the tiles the
  opcodes load; it needs ``"opcode_semantics"`` (``{"sA": "load 0", "sBcCrC": "load 1,
  compute, store 2, clear 2"}``), parsed here into ``OpcodeSteps``;
* ``"builtin:NAME"`` (a shipped C model, ``loom/runtime/models``), or any ``"kind:argument"``;
* ``{"python": "file.py:ClassName"}``, ``{"c": "file.c"}``, or ``{kind: argument}`` for a
  kind registered in ``loom.runtime.models.MODEL_KINDS`` (``{"verilator": {...}}``: an RTL
  design, ``loom.runtime.rtl``; the argument, any JSON value, is checked by its kind's factory
  through ``ModelSpec.argument_node``, so its errors carry its JSON path).

This module only reads the entry's shape (paths are relative to the description file and
kept with ``base_dir``); which kinds exist and what they load is the runtime's business.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from typing import Any

from loom.accel.json_node import JsonNode
from loom.accel.opcodes import OpcodeMap, Recv, Send
from loom.core.text import TextCursor, did_you_mean
from loom.errors import LoomError

STEP_KINDS = ("load", "compute", "store", "clear")
FILE_KINDS = ("python", "c")  # kinds whose argument names a file (relative to the description)
_PYTHON_ARGUMENT = r".+:[A-Za-z_][A-Za-z0-9_]*"  # file.py:ClassName


@dataclass(frozen=True)
class Step:
    """One step of an opcode in the generic model: ``load N`` / ``compute`` / ``store N`` / ``clear N``."""

    kind: str
    operand: int | None = None


@dataclass(frozen=True)
class OpcodeSteps:
    opcode: str
    steps: tuple[Step, ...]


@dataclass(frozen=True)
class ModelSpec:
    kind: str
    argument: Any  # text after "kind:" or the object's value ("" for "generic")
    where: str  # JSON path of the "model" entry
    filename: str | None
    base_dir: str | None
    semantics: tuple[OpcodeSteps, ...] = ()  # generic model only
    argument_where: str = ""  # JSON path of the argument ("...model.verilator"; the entry itself for "kind:arg")

    @property
    def text(self) -> str:
        """The model as a short string (``builtin:matmul_v3``, ``python:m.py:M``)."""
        return self.kind if self.argument in ("", None) else f"{self.kind}:{self.argument}"

    def file(self) -> str:
        """The absolute path of the file a ``python`` / ``c`` model names."""
        name = str(self.argument).rsplit(":", 1)[0] if self.kind == "python" else str(self.argument)
        return os.path.normpath(os.path.join(self.base_dir or os.getcwd(), name))

    def fail(self, message: str) -> LoomError:
        return LoomError(message, where=self.where, filename=self.filename)

    def __hash__(self) -> int:  # the argument may be a JSON object (a registered kind's spec): hash its text
        return hash((self.kind, json.dumps(self.argument, sort_keys=True), self.where, self.filename, self.base_dir,
                     self.semantics, self.argument_where))

    def argument_node(self) -> JsonNode:
        """The argument as a JSON node, so a registered kind's own checks name its JSON path."""
        return JsonNode(self.argument, self.argument_where or self.where, self.filename)

    def steps(self, opcode: str) -> tuple[Step, ...]:
        for entry in self.semantics:
            if entry.opcode == opcode:
                return entry.steps
        raise KeyError(opcode)


def parse_model(node: JsonNode, semantics: JsonNode | None, opcode_map: OpcodeMap, n_operands: int,
                outputs: tuple[int, ...], base_dir: str | None) -> ModelSpec:
    """The model entry, checked for shape; the generic model's semantics against the opcode map."""
    value = node.value
    if isinstance(value, str):
        kind, _, argument = value.partition(":")
        if not re.fullmatch(r"[a-z][a-z0-9_]*", kind) or (kind != "generic") != bool(argument):
            raise node.fail(f"expected \"generic\", \"builtin:NAME\" or {{\"python\": \"file.py:Class\"}} / "
                            f"{{\"c\": \"file.c\"}}, found {value!r}")
        if kind == "python" and not re.fullmatch(_PYTHON_ARGUMENT, argument):
            raise node.fail(f"expected \"python:file.py:ClassName\", found {value!r}")
    elif isinstance(value, dict):
        if len(value) != 1:
            raise node.fail(f"expected an object with one key naming the model kind ({{\"python\": "
                            f"\"file.py:Class\"}} or {{\"c\": \"file.c\"}}), found {len(value)} keys")
        ((kind, argument),) = value.items()
        child = JsonNode(argument, f"{node.path}.{kind}", node.filename)
        if kind in FILE_KINDS:
            argument = child.string("a file name relative to the description")
            if kind == "python" and not re.fullmatch(_PYTHON_ARGUMENT, argument):
                raise child.fail(f"expected \"file.py:ClassName\", found {argument!r}")
    else:
        raise node.expected("a model: \"generic\", \"builtin:NAME\", {\"python\": \"file.py:Class\"} "
                            "or {\"c\": \"file.c\"}")
    where = f"{node.path}.{kind}" if isinstance(value, dict) else node.path
    spec = ModelSpec(kind, argument, node.path, node.filename, base_dir, argument_where=where)
    if kind == "generic":
        if semantics is None:
            raise node.fail("the generic model needs \"opcode_semantics\" next to \"model\": the steps of each "
                            "opcode, e.g. {\"sA\": \"load 0\", \"sBcCrC\": \"load 1, compute, store 2, clear 2\"}")
        spec = ModelSpec(kind, "", node.path, node.filename, base_dir,
                         _parse_semantics(semantics, opcode_map, n_operands, outputs))
    elif semantics is not None:
        raise semantics.fail(f"\"opcode_semantics\" only applies to \"model\": \"generic\" (the model is {spec.text!r})")
    return spec


def _parse_semantics(node: JsonNode, opcode_map: OpcodeMap, n_operands: int,
                     outputs: tuple[int, ...]) -> tuple[OpcodeSteps, ...]:
    entries = dict(node.entries("the opcode semantics (opcode id -> steps)"))
    for opcode, child in entries.items():
        if opcode not in opcode_map:
            raise child.fail(f"unknown opcode {opcode!r}; the opcode map has {', '.join(opcode_map.ids)}"
                             f"{did_you_mean(opcode, opcode_map.ids)}")
    result = []
    for entry in opcode_map.entries:
        if entry.id not in entries:
            raise node.fail(f"missing the steps of opcode {entry.id!r} (the generic model runs every opcode "
                            f"by its steps; \"\" for none)")
        child = entries[entry.id]
        steps = _parse_steps(child.string("steps such as \"load 0, compute\""), child, n_operands, outputs)
        loads = [s.operand for s in steps if s.kind == "load"]
        sends = [a.operand for a in entry.actions if isinstance(a, Send)]
        if loads != sends:
            raise child.fail(f"opcode {entry.id!r} sends operand tiles {sends} but its steps load {loads}; "
                             "each send(N) of the opcode is one 'load N', in the same order")
        if steps and not any(not isinstance(a, Recv) for a in entry.actions):
            raise child.fail(f"opcode {entry.id!r} sends nothing to the accelerator, so the model never sees it: "
                             "its steps must be \"\" (its recv takes what an earlier opcode stored)")
        result.append(OpcodeSteps(entry.id, steps))
    return tuple(result)


def _parse_steps(text: str, node: JsonNode, n_operands: int, outputs: tuple[int, ...]) -> tuple[Step, ...]:
    cursor = TextCursor(text, node.path, node.filename)
    steps: list[Step] = []
    for match in re.finditer(r"[^,]+", text):
        word = match.group().strip()
        start = match.start() + len(match.group()) - len(match.group().lstrip())
        parts = word.split()
        if not parts:
            raise cursor.fail("expected a step (load N, compute, store N, clear N)", start)
        kind = parts[0]
        if kind not in STEP_KINDS:
            raise cursor.fail(f"unknown step {kind!r}; expected load N, compute, store N or clear N"
                              f"{did_you_mean(kind, STEP_KINDS)}", start)
        if kind == "compute":
            if len(parts) != 1:
                raise cursor.fail("'compute' takes no operand", start)
            steps.append(Step("compute"))
            continue
        if len(parts) != 2 or not parts[1].isdigit():
            raise cursor.fail(f"expected '{kind} N' with N an operand index", start)
        operand = int(parts[1])
        if operand >= n_operands:
            raise cursor.fail(f"operand {operand} is out of range (the kernel has {n_operands} operands)", start)
        is_output = operand in outputs
        # 'load N' of an output is a preload: the accumulator starts from the tile sent
        if kind in ("store", "clear") and not is_output:
            raise cursor.fail(f"'{kind} {operand}' needs an output operand; operand {operand} is an input", start)
        steps.append(Step(kind, operand))
    return tuple(steps)
