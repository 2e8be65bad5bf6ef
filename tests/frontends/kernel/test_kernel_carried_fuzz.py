"""Seeded fuzz of loop-carried state that starts as a Python constant (``seen = False``, ``n = 0``): random
kernels whose conditions read that state, with break/continue/return and nested for/while(-else) loops, run
by loom and as plain Python, must agree. (A variable assigned under a condition on such a constant was not
carried, and a while loop's break set that way never stopped: ``test_kernel_carried_constants``.)
``LOOM_FUZZ_SCALE=N`` runs N times as many kernels."""

import importlib.util
import itertools
import random

import numpy as np
import pytest

from tests.fuzz.accel_mutator import FUZZ_SCALE

HEADER = """import loom
from loom.frontends.kernel import I32, MemRef


@loom.kernel
def k(X: MemRef[(6,), I32]) -> I32:
    acc = I32(1)
    seen = False
    n = 0
    m = 0
    p = 0
    for t in range(6):
"""
FOOTER = "    return acc * 7 + I32(n) * 3 + I32(m) + I32(p) * 11 + (5 if seen else 0)\n"
KERNELS = 12
_COUNTER = itertools.count()


def _cond(r: random.Random, iv: str) -> str:
    c = r.randint(-1, 4)
    return r.choice(["seen", "not seen", f"n > {c}", f"m == {c}", f"p >= {c}", f"seen and n < {c + 2}",
                     f"X[({iv}) % 6] > {c}", f"n + m > {c} or X[({iv} + 1) % 6] < 0", "m", "not n",
                     f"X[({iv}) % 6] and p"])


def _block(r: random.Random, depth: int, loops: tuple, indent: int) -> list[str]:
    pad = " " * indent
    lines = []
    for _ in range(r.randint(1, 3)):
        iv = r.choice(loops)
        kind = r.choice(["acc", "set", "count", "if", "if", "if", "for", "while", "exit", "return"]
                        if depth else ["acc", "set", "count"])
        if kind == "acc":
            lines.append(f"{pad}acc = (acc * 3 + X[({iv}) % 6] + {r.randint(-5, 5)}) % 1000")
        elif kind == "set":
            lines.append(f"{pad}seen = {r.choice(['True', 'False', 'not seen', 'n > m'])}")
        elif kind == "count":
            lines.append(f"{pad}{r.choice(['n', 'm', 'p'])} += {r.randint(1, 2)}")
        elif kind == "if":
            lines.append(f"{pad}if {_cond(r, iv)}:")
            lines += _block(r, depth - 1, loops, indent + 4)
            if r.random() < 0.4:
                lines.append(f"{pad}else:")
                lines += _block(r, depth - 1, loops, indent + 4)
        elif kind == "for":
            name = f"i{next(_COUNTER)}"
            lines.append(f"{pad}for {name} in range({r.randint(0, 4)}):")
            lines += _block(r, depth - 1, (*loops, name), indent + 4)
            if r.random() < 0.3:  # for-else: runs unless the loop broke
                lines.append(f"{pad}else:")
                lines += [ln for ln in _block(r, 0, loops, indent + 4)]
        elif kind == "while":
            name = f"w{next(_COUNTER)}"
            lines += [f"{pad}{name} = 0", f"{pad}while {name} < {r.randint(0, 4)}:", f"{pad}    {name} += 1"]
            lines += _block(r, depth - 1, (*loops, name), indent + 4)
            if r.random() < 0.3:
                lines.append(f"{pad}else:")
                lines += _block(r, 0, loops, indent + 4)
        elif kind == "exit":
            lines.append(f"{pad}if {_cond(r, iv)}:")
            lines.append(f"{pad}    {r.choice(['break', 'continue'])}")
        else:
            lines.append(f"{pad}if {_cond(r, iv)}:")
            lines.append(f"{pad}    return acc + I32(n)")
    return lines


def _load(tmp_path, source: str):
    path = tmp_path / f"fuzz_carried_{next(_COUNTER)}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.k


@pytest.mark.parametrize("seed", range(KERNELS * FUZZ_SCALE))
def test_fuzz_carried_constants_match_python(tmp_path, seed):
    r = random.Random(seed)
    source = HEADER + "\n".join(_block(r, 3, ("t",), 8)) + "\n" + FOOTER
    kernel = _load(tmp_path, source)
    for trial in range(2):
        x = np.array([r.randint(-9, 9) for _ in range(6)], np.int32)
        with np.errstate(over="ignore"):
            want = kernel.__wrapped__(x.copy())
        assert kernel(x.copy()) == want, source
