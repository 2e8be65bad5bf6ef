"""A researcher's matvec written with for loops offers the accelerator nothing to match: the refusal says the
kernel has loops and no linalg op, and how to write it (it used to advise generalising and bufferizing)."""

from __future__ import annotations

import numpy as np
import pytest

from loom import I32, MemRef, kernel, linalg
from loom.driver.compile import compile_driver
from loom.errors import LoomError
from loom.examples import ACCELERATORS_DIR

MATVEC = str(ACCELERATORS_DIR / "matvec.json")


@kernel
def mv_loops(A: MemRef[(16, 24), I32], x: MemRef[(24,), I32], y: MemRef[(16,), I32]):
    for i in range(16):
        acc = y[i]
        for k in range(24):
            acc = acc + A[i, k] * x[k]
        y[i] = acc


@kernel
def mv_linalg(A: MemRef[(16, 24), I32], x: MemRef[(24,), I32], y: MemRef[(16,), I32]):
    linalg.einsum("mk,k->m", A, x, out=y)


def test_a_loop_kernel_is_refused_with_the_way_to_write_it():
    with pytest.raises(LoomError, match=r"no linalg op, only loops \(2 scf.for\).*loom.linalg"):
        compile_driver(mv_loops, MATVEC, "mv_8", "Ys")
    drv = compile_driver(mv_linalg, MATVEC, "mv_8", "Ys")  # the advice works
    rng = np.random.default_rng(0)
    A, x, y = rng.integers(-9, 9, (16, 24)).astype(np.int32), rng.integers(-9, 9, 24).astype(np.int32), \
        np.zeros(16, np.int32)
    drv(A, x, y)
    assert np.array_equal(y, A @ x)
