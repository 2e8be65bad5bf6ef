"""Fuzz the EKL parser and elaborator: token-level mutants of the messner acceptance files and of small
kernels using every construct. The only allowed outcomes are success or a LoomError located at
file:line:column; never another exception. Seeded, bounded (a few seconds)."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from loom.errors import LoomError
from loom.frontends.ekl.elaborate import elaborate
from loom.frontends.ekl.parser import parse
from loom.jit.ekl import EklKernel

pytestmark = pytest.mark.filterwarnings("ignore::loom.errors.LoomWarning")  # mutants chain operators freely
MESSNER = Path(__file__).parent.parent / "ekl" / "messner"
SNIPPETS = [
    "kernel k(A : f64[4, 3], v : inout& f64[3], y : out& f64[4, 3, 2]) {\n"
    "  let s = 1.0 + (<+ k< A[_0, k] * v[k]);\n  let w = ([A, A * s]) ~ [_2, _4, _3];\n"
    "  out y[i, j, t] = w[t, i, j] + (A # v)[i, j, _0] + sum(A[:, j], _1, _3);\n  out v = v - v - v;\n}\n",
    "const L = [[_0, _2], [_1, _3]];\nkernel g(j : index[4], a : f64[6, 3], y : out& f64[4])\n{\n"
    "  let u[x, c: _2] = a[j[x] + _1, c] > 0.5 ? 1 : 0;\n"
    "  out y[x] = <+ c: _2< u[x, c] * (if j[x] > 0 then a[j[x] - _1, c] else 2.0) + sum(a[:, _0], L[_0, _0], _3);\n"
    "}\n",
]
_TOKEN = re.compile(r"_[0-9]+|[0-9.]+(?:[eEpP][+-]?[0-9]+)?|[$_A-Za-z][$_A-Za-z0-9]*|\.\.\.|<:|!>|\|\||&&|==|~=|<=|>="
                    r"|\S")
VOCABULARY = ["_0", "_3", "1.5", "x", "k", "A", "[", "]", "(", ")", "{", "}", "<", "+", "*", "#", "~", "?", ":",
              ";", ",", "...", "let", "out", "in", "if", "then", "else", "sum", "index", "<+", "&", "-", "^", "="]


def _kind(token: str) -> str:
    return "name" if token[0].isalpha() or token[0] == "$" else "index" if token[0] == "_" else \
        "number" if token[0].isdigit() else "op"


def mutants(text: str, count: int, seed: int):
    """Half the mutants swap one token for another of its kind from the same text (names, index literals,
    numbers, operators: mostly still parses, so elaboration is exercised); half edit 1-3 tokens freely."""
    rng = random.Random(seed)
    spans = [m.span() for m in _TOKEN.finditer(text)]
    by_kind: dict[str, list[str]] = {}
    for start, end in spans:
        by_kind.setdefault(_kind(text[start:end]), []).append(text[start:end])
    for n in range(count):
        if n % 2 == 0:
            start, end = spans[rng.randrange(len(spans))]
            yield text[:start] + rng.choice(by_kind[_kind(text[start:end])]) + text[end:]
            continue
        out = text
        for _ in range(rng.randint(1, 3)):
            start, end = spans[rng.randrange(len(spans))]
            if end > len(out):
                continue
            action = rng.randrange(4)
            if action == 0:
                out = out[:start] + out[end:]
            elif action == 1:
                out = out[:start] + rng.choice(VOCABULARY) + out[end:]
            elif action == 2:
                out = out[:start] + out[start:end] + " " + out[start:end] + out[end:]
            else:
                out = out[:start] + " " + rng.choice(VOCABULARY) + " " + out[start:]
        yield out


def check(text: str, name: str, lower: bool = False) -> None:
    try:
        kernels = elaborate(parse(text, name))
    except LoomError as error:
        assert error.filename == name and error.line is not None and error.line >= 1, str(error)
        return
    for kernel in kernels if lower else []:
        try:
            EklKernel(kernel).ir("linalg")  # esn module and convert-esn-to-linalg accept what elaborates
        except LoomError as error:
            assert error.message, str(error)


@pytest.mark.parametrize("path", sorted(MESSNER.glob("*.ekl")), ids=lambda p: p.name)
def test_messner_file_mutants_fail_only_with_located_errors(path):
    text = path.read_text()
    for k, mutant in enumerate(mutants(text, 120 if "helmholtz" in path.name else 40, seed=len(text))):
        check(mutant, f"mutant{k}.ekl")


@pytest.mark.parametrize("index", range(len(SNIPPETS)))
def test_construct_mutants_fail_only_with_located_errors(index):
    elaborate(parse(SNIPPETS[index], "snippet.ekl"))  # the unmutated snippet elaborates
    for k, mutant in enumerate(mutants(SNIPPETS[index], 160, seed=index)):
        check(mutant, f"mutant{k}.ekl", lower=True)
