"""A LoomError from a kernel's call, compile or IR leaves loom with its traceback ending at the user's call: the
error names the kernel's file and line, and the tracer's frames (dozens, for an error deep in an expression) are
cut. ``LOOM_TRACEBACK=1`` keeps them for loom's own bugs."""

import traceback
from pathlib import Path

import numpy as np
import pytest

import loom
from loom.errors import LoomError
from loom.frontends.kernel import F64, Dim, MemRef

N = Dim("N")
LOOM = str(Path(loom.__file__).resolve().parent)


def _make():
    @loom.kernel
    def adds_an_index(x: MemRef[(N,), F64]):
        for i in range(N):
            x[i] = x[i] + i  # f64 + index: refused while tracing

    return adds_an_index


def _loom_frames(err):
    return [f for f in traceback.extract_tb(err.__traceback__) if f.filename.startswith(LOOM)]


@pytest.mark.parametrize("entry", ["call", "compile", "ir", "module"])
def test_a_kernel_error_keeps_one_loom_frame(entry, monkeypatch):
    monkeypatch.delenv("LOOM_TRACEBACK", raising=False)
    k = _make()
    run = {"call": lambda: k(np.zeros(4)), "compile": k.compile, "ir": k.ir, "module": lambda: k.module}[entry]
    with pytest.raises(LoomError, match=r"test_kernel_error_traceback.py:\d+:\d+: type mismatch in '\+'") as err:
        run()
    frames = _loom_frames(err.value)
    assert [f.name for f in frames] == ["entry"], frames
    assert str(traceback.extract_tb(err.value.__traceback__)[0].filename) == __file__


def test_loom_traceback_keeps_the_tracer_s_frames(monkeypatch):
    monkeypatch.setenv("LOOM_TRACEBACK", "1")
    with pytest.raises(LoomError) as err:
        _make()(np.zeros(4))
    assert len(_loom_frames(err.value)) > 10
