"""Seeded fuzz of helpers with guard-clause returns (``guard_returns.py``): random helpers of nested if/elif/else
with returns ending any block, called from a kernel, run by loom and as plain Python, must return the same
values. ``LOOM_FUZZ_SCALE=N`` runs N times as many helpers."""

import importlib.util
import itertools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.fuzz.accel_mutator import FUZZ_SCALE

_COUNTER = itertools.count()


@st.composite
def block(draw, depth: int, indent: int) -> list[str]:
    """Statements at ``indent``; the block may end in a return."""
    pad = " " * indent
    lines = []
    for _ in range(draw(st.integers(1, 3))):
        if depth and draw(st.booleans()):
            c = draw(st.integers(-5, 40))
            lines.append(f"{pad}if v > {c}:")
            lines += draw(block(depth - 1, indent + 4))
            tail = draw(st.sampled_from(["", "elif", "else"]))
            if tail == "elif":
                lines.append(f"{pad}elif v < {draw(st.integers(-5, 40))}:")
                lines += draw(block(depth - 1, indent + 4))
            if tail:
                lines.append(f"{pad}else:")
                lines += draw(block(depth - 1, indent + 4))
        else:
            lines.append(f"{pad}v = (v * {draw(st.integers(2, 5))} + {draw(st.integers(-9, 9))}) % 50")
    if draw(st.integers(0, 2)) == 0:
        lines.append(f"{pad}return v + {draw(st.integers(100, 900))}")
    return lines


@st.composite
def helper_source(draw) -> str:
    body = "\n".join(draw(block(3, 4)))
    return ("import loom\nfrom loom.frontends.kernel import I32, MemRef, Dim\nN = Dim('N')\n\n\n"
            f"def helper(v):\n{body}\n    return v\n\n\n"
            "@loom.kernel\ndef k(x: MemRef[(N,), I32], y: MemRef[(N,), I32]):\n"
            "    for i in range(x.shape[0]):\n        y[i] = helper(x[i])\n")


@settings(max_examples=5 * FUZZ_SCALE, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(source=helper_source())
def test_guard_returns_in_helpers_match_python(source, tmp_path):
    path = tmp_path / f"guard_fuzz_{next(_COUNTER)}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    x = np.arange(-6, 46, dtype=np.int32)
    got, want = np.zeros_like(x), np.zeros_like(x)
    module.k(x, got)
    module.k.__wrapped__(x, want)
    np.testing.assert_array_equal(got, want, err_msg=source)


def test_guards_in_both_arms_do_not_copy_exponentially(tmp_path):
    """Returns in both arms of 14 ifs in a row: copying the rest into both arms doubles it per if (2**14 copies,
    minutes of tracing). The rewrite stops copying past a budget; the returns it leaves are refused at their line."""
    lines = ["import loom", "from loom.frontends.kernel import I32, MemRef, Dim", "", "", "def helper(v):"]
    for k in range(14):
        lines += [f"    if v > {k}:", f"        if v > {k + 50}:", f"            return v + {k}", "    else:",
                  f"        if v < {-k}:", f"            return v - {k}", "    v = v * 3 % 7"]
    lines += ["    return v", "", "", "@loom.kernel", "def k(x: MemRef[(4,), I32]):", "    x[0] = helper(x[0])"]
    path = tmp_path / "guard_blowup.py"
    path.write_text("\n".join(lines) + "\n")
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    from loom.errors import LoomError
    with pytest.raises(LoomError, match="return must be the last statement") as e:
        module.k.module
    assert f"{path}:" in str(e.value) and "in helper 'helper'" in str(e.value)
