"""A batched matmul offloaded as one driver call: ``batch_matmul_module`` (a matmul in an
``#accel.loop<batch>`` loop) runs every product in one DMA session on MatMul v4-16 (i32, exact)."""

from __future__ import annotations

import numpy as np
import pytest

from loom.driver import compile_driver
from loom.errors import LoomError
from loom.examples import ACCELERATORS_DIR
from loom.models.offload import _matmul_module, batch_matmul_module
from loom.runtime.build import load_library
from loom.runtime.timing import deterministic_host

V4 = ACCELERATORS_DIR / "matmul_v4.json"
BATCH, M, N, K = 5, 40, 48, 20  # partial tiles on every dim with 32-wide tiles


def _operands(seed: int = 0):
    rng = np.random.default_rng(seed)
    a = rng.integers(-8, 8, (BATCH, M, K)).astype(np.int32)
    b = rng.integers(-8, 8, (BATCH, K, N)).astype(np.int32)
    c = rng.integers(-8, 8, (BATCH, M, N)).astype(np.int32)
    return a, b, c


@pytest.mark.parametrize("flow, double_buffer", [("Cs", False), ("Bs", True)])
def test_one_session_equals_numpy_moves_the_analytic_words_and_beats_separate_calls(flow, double_buffer):
    options = dict(tile_sizes={"m": 32, "n": 32, "k": 16}, double_buffer=double_buffer)
    batched = compile_driver(batch_matmul_module(np.dtype("int32")), V4, "v4_16", flow, **options)
    single = compile_driver(_matmul_module(np.dtype("int32")), V4, "v4_16", flow, **options)
    assert batched.batch_dims == 1 and single.batch_dims == 0
    a, b, c0 = _operands()
    c = c0.copy()
    with deterministic_host(load_library(), call_s=100e-9, word_s=1e-9):
        stats = batched(a, b, c)
        separate = 0.0
        for k in range(BATCH):
            separate += single(a[k], b[k], c0[k].copy()).timing.total_s
    np.testing.assert_array_equal(c, c0 + np.einsum("bmk,bkn->bmn", a, b))
    one = batched.summary.expected_transfers({"m": M, "n": N, "k": K})
    t = stats.transfers
    assert (t.sends, t.recvs, t.words_sent, t.words_received) == (
        BATCH * one.sends, BATCH * one.recvs, BATCH * one.words_sent, BATCH * one.words_received)
    # the same words and set-ups as BATCH calls, on one timeline: a problem's first transfers start
    # while the previous problem's last are under way
    assert stats.timing.sends == t.sends and stats.timing.total_s < separate


def test_batch_axes_that_differ_are_refused_before_the_driver_runs():
    drv = compile_driver(batch_matmul_module(np.dtype("int32")), V4, "v4_16", "Cs")
    a, b, c = _operands()
    before = c.copy()
    with pytest.raises(LoomError, match=r"operand B has batch axes \(4,\), the first operand \(5,\)"):
        drv(a, b[:4], c)
    with pytest.raises(LoomError, match=r"operand B dim 0 has size"):
        drv(a, np.zeros((BATCH, K + 1, N), np.int32), c)
    np.testing.assert_array_equal(c, before)
