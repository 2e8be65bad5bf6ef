"""Defect 2: a compile-time index or slice outside a static memref is a LoomError at the kernel's line."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

from loom.errors import LoomError
from loom.jit.kernel import Kernel


def trace(tmp_path, body: str, params: str = "A: MemRef[(4,), I32]"):
    src = f"from loom import *\n\ndef k({params}):\n" + textwrap.indent(textwrap.dedent(body), "    ")
    path = tmp_path / "k_src.py"
    path.write_text(src)
    namespace: dict = {}
    exec(compile(src, str(path), "exec"), namespace)
    k = Kernel(namespace["k"])
    marked = [n for n, text in enumerate(src.splitlines(), 1) if text.endswith("# bad")]
    return k, path, marked[0] if marked else None


CASES = {
    "store past end": ("A[4] = 1  # bad\n", "index 4 is out of range for dim 0 of size 4"),
    "load past end": ("x = A[7]  # bad\nA[0] = x\n", "index 7 is out of range for dim 0 of size 4"),
    "negative store": ("A[-1] = 1  # bad\n", "negative index -1"),
    "negative load": ("x = A[-2]  # bad\nA[0] = x\n", "negative index -2"),
    "constant name": ("n = 5\nA[n] = 1  # bad\n", "index 5 is out of range"),
    "index arithmetic": ("j = Index(2) + 2\nA[j] = 1  # bad\n", "index 4 is out of range"),
    "slice end past end": ("B = A[1:6]  # bad\nB[0] = 1\n", "slice end 6 is beyond dim 0 of size 4"),
    "slice start past end": ("B = A[5:]  # bad\nB[0] = 1\n", "slice start 5 is beyond dim 0 of size 4"),
    "negative slice": ("B = A[-1:3]  # bad\nB[0] = 1\n", "negative slice bounds"),
    "slice longer than dim": ("for i in range(2):\n    B = A[i:i + 6]  # bad\n    B[0] = 1\n", "slice of 6 elements"),
}


@pytest.mark.parametrize("name", CASES)
def test_constant_out_of_range_is_a_located_error(tmp_path, name):
    body, message = CASES[name]
    k, path, line = trace(tmp_path, body)
    with pytest.raises(LoomError, match=message) as err:
        k.ir()
    assert err.value.filename == str(path)
    assert err.value.line == line, str(err.value)


def test_2d_axis_is_named(tmp_path):
    k, path, _ = trace(tmp_path, "A[1, 3] = 1\n", "A: MemRef[(4, 3), I32]")
    with pytest.raises(LoomError, match="index 3 is out of range for dim 1 of size 3"):
        k.ir()


@pytest.mark.sanitize
def test_in_range_constants_still_compile_and_run(tmp_path):
    k, _, _ = trace(tmp_path, "A[3] = A[0] + 1\nB = A[1:4]\nB[0] = 7\nC = A[4:]\n")
    a = np.array([5, 0, 0, 0], np.int32)
    k(a)
    np.testing.assert_array_equal(a, [5, 7, 0, 6])
