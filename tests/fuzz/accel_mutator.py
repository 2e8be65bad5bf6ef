"""A seeded, structure-aware mutator of accelerator descriptions, and the fuzzing contract.

The contract (issue 9, item 4): every input to the description loader, the opcode grammar,
host files and ``compile_driver`` ends in success or in a ``LoomError`` that is located (a JSON
path in ``where``, or a ``column``/``line``). Anything else is a bug; ``check_outcome`` turns
it into a test failure that carries the reproducer.

Mutations are drawn from what users get wrong and what parsers choke on: numbers in unusual
forms (``1e3``, ``-0``, ``4.0``, huge, negative, NaN), wrong JSON types, missing and unknown
keys, edits inside the opcode map / flow / permutation strings (ids swapped, scopes opened or
closed, actions renamed, indices out of range), overlapping DMA windows, deep nesting.

``FUZZ_SCALE`` (environment ``LOOM_FUZZ_SCALE``, default 1) multiplies every iteration count:
CI runs the bounded default in seconds; ``LOOM_FUZZ_SCALE=50`` is the long run.
"""

from __future__ import annotations

import copy
import json
import os
import random
import traceback
from pathlib import Path
from typing import Any, Callable

from loom.errors import LoomError

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "loom" / "examples" / "accelerators"
FUZZ_SCALE = max(1, int(os.environ.get("LOOM_FUZZ_SCALE", "1") or "1"))

WEIRD_NUMBERS: list[Any] = [0, -0.0, float("nan"), float("inf"), -1, 1, 2, 3, 4.0, 1e3, 1.5, 2**31, 2**32, 2**63,
                            10**30, -2**31, 1e300,
                            "4", "0x10", "full", "32KiB", "-4", "", None, True, False, [], {}]
WEIRD_STRINGS: list[Any] = ["", " ", "m", "k", "x", "(", ")", "()", "((", "\"", "\\", "\u2603", "a b", "\n",
                            "0x", "send(0)", "-> ()", "(m, n, k) -> (m, n, k)", "(m, n, k) -> (k, m)",
                            7, None, [], {}, True, "(a (b) (c))", "opcode_map<>", "opcode_flow<(s)>"]
NAMES = ['q"uote', "back\\slash", "new\nline", "tab\t", "caf\u00e9 \u2603", "}{,=", "*/ /*", "<>", "", " ",
         "cr\rname", "#accel.plan<", "a" * 300]
ACTIONS = ["send(0)", "send(1)", "send(2)", "send(3)", "recv(2)", "recv(0)", "recv(2, replace)",
           "recv(2, accumulate)", "send_literal(7)", "send_literal(0xFFFFFFFF)", "send_literal(-1)",
           "send_literal(4294967296)", "send_dim(0, 0)", "send_dim(1, 1)", "send_dim(2, 5)", "send_idx(0, 1)",
           "send_idx(2, 0)", "send_idx(1, 0)", "sned(0)", "send()", "send(0", "recv(2, sum)"]


def example(name: str, index: int = 0) -> dict:
    """One accelerator of an example file, with its host inlined (a self-contained description)."""
    data = json.loads((EXAMPLES / name).read_text())
    data["cpu"] = json.loads((EXAMPLES / "pynq-z2.json").read_text())["cpu"]
    data["accelerators"] = [data["accelerators"][index]]
    data.pop("$schema", None)
    return data


def seeds() -> list[dict]:
    return [example("matmul_v1.json"), example("matmul_v2.json"), example("matmul_v3.json"),
            example("matmul_v3.json", 1), example("matmul_v4.json"), example("conv2d.json")]


# ------------------------------------------------------------------------------ tree mutations
def _containers(value: Any, path: tuple = ()) -> list[tuple[tuple, Any]]:
    out = []
    if isinstance(value, dict):
        out.append((path, value))
        for k, v in value.items():
            out.extend(_containers(v, (*path, k)))
    elif isinstance(value, list):
        out.append((path, value))
        for i, v in enumerate(value):
            out.extend(_containers(v, (*path, i)))
    return out


def _edit_text(rng: random.Random, text: str) -> str:
    """A small edit inside an opcode map / flow / permutation string."""
    if not text:
        return rng.choice(["(", "s", "opcode_map<"])
    i = rng.randrange(len(text) + 1)
    kind = rng.randrange(8)
    if kind == 0:
        return text[:i] + text[i + 1:]  # delete a character
    if kind == 1:
        return text[:i] + rng.choice("()[]<>=,\" -0123456789xsrcABmnk\\\u00e9") + text[i:]
    if kind == 2:  # swap two ids / numbers
        words = text.replace("(", " ( ").replace(")", " ) ").split()
        if len(words) > 1:
            a, b = rng.randrange(len(words)), rng.randrange(len(words))
            words[a], words[b] = words[b], words[a]
        return " ".join(words)
    if kind == 3:  # insert or replace an action
        if "[" in text:
            j = text.index("[") + 1
            return text[:j] + rng.choice(ACTIONS) + ", " + text[j:]
        return text[:i] + rng.choice(ACTIONS) + text[i:]
    if kind == 4:  # wrap in or strip a scope
        return f"({text})" if rng.random() < 0.5 else text[1:-1]
    if kind == 5:
        return text[:i]  # truncate
    if kind == 6:  # a digit becomes another number
        digits = [j for j, c in enumerate(text) if c.isdigit()]
        if digits:
            j = rng.choice(digits)
            return text[:j] + str(rng.choice([0, 1, 2, 3, 9, 99, 2**32, 10**50])) + text[j + 1:]
        return text
    return text + rng.choice([" ", ")", ",", ", x=[send(0)]", " extra"])


def _targeted(rng: random.Random, acc: dict) -> None:
    """An edit of the fields the validator reasons about: opcodes, flows, tiles, DMA, buffers."""
    field = rng.choice(["opcode_map", "opcode_flows", "tile_sizes", "init_opcodes", "permutation", "dma",
                        "buffers", "selected_flow", "region", "names"])
    if field in ("opcode_map", "permutation", "init_opcodes"):
        acc[field] = _edit_text(rng, acc.get(field) if isinstance(acc.get(field), str) else "(reset)")
        if field == "init_opcodes" and rng.random() < 0.5:  # an init opcode that exists
            entry = rng.choice(ACTIONS[:18])
            acc["opcode_map"] = acc["opcode_map"].rstrip(">") + f", init=[{entry}]" + (
                ">" if acc["opcode_map"].endswith(">") else "")
            acc["init_opcodes"] = "(init)"
    elif field == "opcode_flows" and isinstance(acc.get("opcode_flows"), dict) and acc["opcode_flows"]:
        name = rng.choice(list(acc["opcode_flows"]))
        flow = acc["opcode_flows"][name]
        if isinstance(flow, dict) and isinstance(flow.get("flow"), str):
            if rng.random() < 0.3 and "permutation" in flow:
                flow["permutation"] = _edit_text(rng, flow["permutation"])
            else:
                flow["flow"] = _edit_text(rng, flow["flow"])
            if rng.random() < 0.2:
                flow["accumulate_on_cpu"] = not flow.get("accumulate_on_cpu", False)
        elif isinstance(flow, str):
            acc["opcode_flows"][name] = _edit_text(rng, flow)
    elif field == "tile_sizes" and isinstance(acc.get("tile_sizes"), dict) and acc["tile_sizes"]:
        dim = rng.choice(list(acc["tile_sizes"]))
        acc["tile_sizes"][dim] = rng.choice([1, 2, 3, 5, 8, 4.0, 1e3, "full", -0.0, 2**31, 10**20,
                                             {"multiple_of": 4, "default": 8}, {"min": 8, "max": 4}])
    elif field == "dma" and isinstance(acc.get("dma"), dict):
        key = rng.choice(["dma_address", "input_address", "input_size", "output_address", "output_size"])
        acc["dma"][key] = rng.choice(["0x16000000", "0x16000100", "0x40400000", "0xFFFFFFFC", "0x0", 0, 4, 64,
                                      "0x100000000", 2**31, 2**31 + 4, "64K", "2G", "4096G", 6, -4, "0x", "zz"])
    elif field == "buffers":
        acc["buffers"] = {rng.choice(["A", "B", "C", "I", "W", "O", "Z"]): rng.choice([1, 16, 64, 2**40, 0])}
    elif field == "names":  # free-text names end up in IR attributes and pass options
        name = rng.choice(NAMES)
        flows = acc.get("opcode_flows")
        if rng.random() < 0.5 or not isinstance(flows, dict) or not flows:
            acc["name"] = name
        else:
            old = acc.get("selected_flow") if acc.get("selected_flow") in flows else next(iter(flows))
            flows[name] = flows.pop(old)
            acc["selected_flow"] = name
    elif field == "selected_flow":
        acc["selected_flow"] = rng.choice(["Ns", "As", "Bs", "Cs", "Os", "", "zz"])
    elif isinstance(acc.get("opcode_flows"), dict) and acc["opcode_flows"]:
        name = rng.choice(list(acc["opcode_flows"]))
        flow = acc["opcode_flows"][name]
        flow = flow if isinstance(flow, dict) else {"flow": flow}
        flow["region_operands"] = rng.sample(["A", "B", "C", "I", "W", "O"], rng.randint(1, 2))
        acc["opcode_flows"][name] = flow


def mutate_tree(rng: random.Random, data: dict, edits: int | None = None) -> dict:
    """``edits`` (default 1-3) edits of a decoded description: targeted at the validator's fields, or anywhere."""
    data = copy.deepcopy(data)
    for _ in range(edits or rng.randint(1, 3)):
        accs = data.get("accelerators")
        if rng.random() < 0.5 and isinstance(accs, list) and accs and isinstance(accs[0], dict):
            _targeted(rng, accs[0])
            continue
        path, node = rng.choice(_containers(data))
        if isinstance(node, dict):
            if not node or rng.random() < 0.15:
                node[rng.choice(["extra", "tile_size", "opcode_flow", "Name", "cpu", "notes"])] = 1
                continue
            key = rng.choice(list(node))
            value = node[key]
            kind = rng.randrange(7)
            if kind == 0:
                del node[key]
            elif kind == 1:
                node[key] = rng.choice(WEIRD_NUMBERS)
            elif kind == 2:
                node[key] = rng.choice(WEIRD_STRINGS)
            elif kind == 3 and isinstance(value, str):
                node[key] = _edit_text(rng, value)
            elif kind == 4 and isinstance(value, (int, float)) and not isinstance(value, bool):
                node[key] = rng.choice([value * 2, value - 1, -value, value / 3, 0, value * 2**20, float(value)])
            elif kind == 5:  # another key's value (right type, wrong meaning)
                other = rng.choice(list(node))
                node[key] = copy.deepcopy(node[other])
            else:
                node[key] = [value] if rng.random() < 0.5 else {"x": value}
        elif isinstance(node, list):
            kind = rng.randrange(4)
            if kind == 0 and node:
                node.pop(rng.randrange(len(node)))
            elif kind == 1 and node:
                node.append(copy.deepcopy(rng.choice(node)))
            elif kind == 2 and node:
                i = rng.randrange(len(node))
                node[i] = rng.choice(WEIRD_STRINGS + WEIRD_NUMBERS)
            else:
                rng.shuffle(node)
    return data


# ------------------------------------------------------------------------------ text mutations
def mutate_text(rng: random.Random, text: str) -> str | bytes:
    """An edit of the JSON text itself: what a text editor or a bad copy does."""
    kind = rng.randrange(10)
    i = rng.randrange(len(text) + 1)
    if kind == 0:
        return text[:i]
    if kind == 1:
        return text[:i] + rng.choice(["NaN", "Infinity", "-Infinity", "1e999", "9" * 5000, "-0", "1.0e3",
                                      "0x10", "01", ".5", "1.", "+1", "true", "null"]) + text[i:]
    if kind == 2:  # duplicate a key
        j = text.find('": ', i)
        k = text.rfind('"', 0, j) if j > 0 else -1
        if k > 0 and j > 0:
            m = text.rfind('"', 0, k)
            key = text[m:j + 3]
            return text[:m] + key + "1, " + text[m:]
        return text
    if kind == 3:
        encoded = text.encode()
        return encoded[:i] + rng.choice([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\x00", b"\xef\xbb\xbf"]) + encoded[i:]
    if kind == 4:  # deep nesting
        depth = rng.choice([63, 65, 200, 5000, 100000])
        return text[:i] + "[" * depth + "]" * depth + text[i:]
    if kind == 5:
        return text[:i] + rng.choice(["{", "}", "[", "]", ",", ":", "\"", "\\", "\\u12", "\\ud800"]) + text[i:]
    if kind == 6:
        return text[:i] + text[i + rng.randint(1, 20):]
    if kind == 7:
        return "\ufeff" + text
    if kind == 8:
        return text.replace("4", rng.choice(["4.0", "4e0", "-0", "40000000000000000000", "4.5"]), rng.randint(1, 3))
    return text.replace(": ", ": [", 1)


# ------------------------------------------------------------------------------ the contract
def located(err: LoomError) -> bool:
    """A LoomError says where: a JSON path, a column, or a line of a file."""
    return bool(err.where) or err.column is not None or err.line is not None


def check_outcome(fn: Callable[[], Any], reproducer: Callable[[], str]) -> Any:
    """Run ``fn``: its result, or None for a located LoomError; anything else fails with the reproducer."""
    try:
        return fn()
    except LoomError as err:
        if not located(err):
            raise AssertionError(f"LoomError without a location: {err}\n--- input:\n{reproducer()}") from None
        return None
    except BaseException as err:  # noqa: BLE001 - this is the point: nothing else may escape
        if isinstance(err, KeyboardInterrupt):
            raise
        raise AssertionError(f"{type(err).__name__} escaped (not a LoomError): {err}\n"
                             f"{''.join(traceback.format_exception(err)[-6:])}\n--- input:\n{reproducer()}") from None


def short(value: Any, limit: int = 3000) -> str:
    text = value if isinstance(value, str) else repr(value) if isinstance(value, bytes) else json.dumps(value)
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} chars)"
