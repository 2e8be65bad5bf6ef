"""Fuzz the kernel frontend: random kernel bodies from a grammar of Python constructs (supported and
not) are traced; the only allowed outcomes are success or a LoomError located at file:line."""

from __future__ import annotations

import itertools
import textwrap

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loom.errors import LoomError
from loom.jit.kernel import Kernel

EXPRS = [
    "A[i]", "B[i]", "s", "x", "1", "2.5", "-3", "i", "n", "A[0]", "A[i + 1]", "B[i, 0]", "A[1:3]", "A[::2]",
    "A @ B", "x ** 2.5", "x ** 2", "x ** y", "(lambda t: t)(x)", "[t for t in range(3)]", "f'{x}'",
    "0 < x < 1", "x.real", "A.shape", "unknown(x)", "abs(x, x)", "min(x)", "max(x, y, s)", "x if x > 0 else y",
    "(y := 2)", "not x", "x and y", "x or y", "~i", "x // y", "x % 0", "i // 0", "i << 40", "A[i][0]",
    "A[s]", "A[x]", "A[-1]", "A[4]", "A[1:9]", "A[3:1]", "A[i:i+2:0]", "len(A)", "range(3)", "(x, y)",
    "{1: 2}", "{x}", "None", "'text'", "b'raw'", "True", "F32(x)", "I32(x)", "Index(x)", "Index(i)", "x + A",
    "A + A", "A * 2", "loom.math.exp(x)", "loom.math.exp(x, y)", "print(x)", "float(x)", "int(x)", "i * 1.5",
    "x[0]", "n[0]", "A.T", "s.foo", "k(A, B, s)", "k(A)", "*A", "x if A else y", "A < B", "x == None",
]
TARGETS = ["x", "y", "A[i]", "A[0]", "B[i, 0]", "A[1:3]", "A", "s", "i", "n", "(x, y)", "A[i], x", "A.shape",
           "x.attr", "A[4]", "B[0]"]
STATEMENTS = [
    "{t} = {e}", "{t} += {e}", "{t} -= {e}", "{t} @= {e}", "{t} **= {e}", "pass", "return", "return {e}",
    "if {e}:\n    {t} = {e}", "if {e}:\n    {t} = {e}\nelse:\n    {t} = {e}",
    "for i in range({e}):\n    {t} = {e}", "for i in range(0, n, 2):\n    A[i] = {e}",
    "for i in {e}:\n    pass", "for a, b in range(3):\n    pass", "while {e}:\n    {t} = {e}",
    "with open('f') as fh:\n    pass", "try:\n    {t} = {e}\nexcept Exception:\n    pass",
    "del {t}", "global G\n{t} = G", "nonlocal_x = 1", "assert {e}", "raise ValueError()", "import os",
    "def inner(q):\n    return q\n{t} = inner({e})", "class C:\n    pass", "{e}", "break", "continue",
    "x, y = {e}", "x = y = {e}", "lambda: 0", "yield {e}", "async_x = 1", "for i in range(3):\n    break",
    "for i in range(n):\n    if {e}:\n        continue\n    A[i] = {e}", "x: F32 = {e}", "print({e})",
    "match x:\n    case 1:\n        pass",
]
PARAMS = [
    "A: MemRef[(N,), F32], B: MemRef[(N, 2), F32], s: F32",
    "A: MemRef[(4,), I32], B: MemRef[(4, 2), I32], s: I32",
    "A: MemRef[(N,), F32], B: MemRef[(N, 2), F32], s: F32, n: Index",
    "A: MemRef[(N,), F32], *rest",
    "A: MemRef[(N,), F32], B=3",
    "A: MemRef[(N,), Q32]",
    "A: MemRef[(N, F32)]",
    "A",
]
HEADER = "from __future__ import annotations\nimport loom\nfrom loom import *\nN = Dim('N')\nG = 3\n\n@kernel\ndef k2(A: MemRef[(N,), F32]):\n    A[0] = 1.0\n\n"


@st.composite
def kernel_source(draw):
    params = draw(st.sampled_from(PARAMS))
    n = draw(st.integers(1, 5))
    body = []
    for _ in range(n):
        template = draw(st.sampled_from(STATEMENTS))
        fields = {"t": draw(st.sampled_from(TARGETS))}
        text = template
        while "{e}" in text:
            text = text.replace("{e}", draw(st.sampled_from(EXPRS)), 1)
        body.append(text.replace("{t}", fields["t"]))
    prelude = "    x = 1.0\n    y = 2.0\n    i = 0\n" if draw(st.booleans()) else ""
    return HEADER + f"def k({params}):\n" + prelude + textwrap.indent("\n".join(body), "    ") + "\n"


_counter = itertools.count()


def trace_source(tmp_dir, src: str) -> None:
    path = tmp_dir / f"fuzz_kernel_{next(_counter)}.py"
    path.write_text(src)
    try:
        code = compile(src, str(path), "exec")
    except SyntaxError:
        return  # not Python: never reaches loom
    namespace: dict = {}
    exec(code, namespace)
    k = Kernel(namespace["k"])
    try:
        k.module
    except LoomError as error:
        assert error.filename == str(path) and error.line is not None, f"unlocated: {error}\n{src}"


@settings(max_examples=150, derandomize=True, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(src=kernel_source())
def test_kernel_frontend_only_raises_located_loom_errors(tmp_path, src):
    trace_source(tmp_path, src)
