"""Seeded fuzz of the control-flow rewrites (break, continue, return from loops, ranges of any step): random
kernels of nested for/while/if over a small array, run by loom and as plain Python, must return the same value.
Bounded for CI (hypothesis derandomized); ``LOOM_FUZZ_SCALE=N`` runs N times as many examples."""

import importlib.util
import itertools

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.fuzz.accel_mutator import FUZZ_SCALE

HEADER = """import loom
from loom.frontends.kernel import I32, MemRef


@loom.kernel
def k(X: MemRef[(5,), I32]) -> I32:
    acc = I32(1)
"""
_COUNTER = itertools.count()


@st.composite
def _block(draw, depth: int, loops: tuple, indent: int):
    """Statements at ``indent`` inside ``loops`` (names of the enclosing loop variables)."""
    pad = " " * indent
    lines = []
    for _ in range(draw(st.integers(1, 3))):
        iv = draw(st.sampled_from(loops)) if loops else "0"
        kind = draw(st.sampled_from(["acc", "acc", "if", "for", "while", "exit", "return"] if depth else ["acc"]))
        if kind == "acc" or (kind == "exit" and not loops):
            c = draw(st.integers(-9, 9))
            lines.append(f"{pad}acc = (acc * 3 + X[({iv}) % 5] + {c}) % 1000")
        elif kind == "if":
            c = draw(st.integers(-5, 15))
            lines.append(f"{pad}if X[({iv} + {c}) % 5] > {c}:")
            lines += draw(_block(depth - 1, loops, indent + 4))
            if draw(st.booleans()):
                lines.append(f"{pad}else:")
                lines += draw(_block(depth - 1, loops, indent + 4))
        elif kind == "for":
            name = f"i{next(_COUNTER) % 1000}"
            a, b, s = draw(st.integers(-3, 6)), draw(st.integers(-3, 6)), draw(st.sampled_from([-2, -1, 1, 2, 3]))
            lines.append(f"{pad}for {name} in range({a}, {b}, {s}):")
            lines += draw(_block(depth - 1, (*loops, name), indent + 4))
        elif kind == "while":
            name = f"w{next(_COUNTER) % 1000}"
            lines.append(f"{pad}{name} = 0")
            lines.append(f"{pad}while {name} < {draw(st.integers(0, 4))}:")
            lines.append(f"{pad}    {name} += 1")
            lines += draw(_block(depth - 1, (*loops, name), indent + 4))
        elif kind == "exit":
            lines.append(f"{pad}{draw(st.sampled_from(['break', 'continue']))}")
            break
        else:
            lines.append(f"{pad}return acc + {draw(st.integers(0, 9))}")
            break
    return lines


def _load(tmp_path, source: str):
    path = tmp_path / f"fuzz_kernel_{next(_COUNTER)}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.k


@settings(max_examples=25 * FUZZ_SCALE, derandomize=True, deadline=None, database=None)
@given(body=_block(3, (), 4), data=st.lists(st.integers(-20, 20), min_size=5, max_size=5))
def test_fuzz_control_flow_matches_python(tmp_path_factory, body, data):
    source = HEADER + "\n".join(body) + "\n    return acc\n"
    kernel = _load(tmp_path_factory.mktemp("k"), source)
    x = np.array(data, np.int32)
    with np.errstate(over="ignore"):
        want = kernel.__wrapped__(x.copy())
    assert kernel(x.copy()) == want, source
