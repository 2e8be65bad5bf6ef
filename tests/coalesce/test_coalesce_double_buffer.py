"""Coalescing combined with double buffering: numpy results, the coalesced transaction count,
a lower total time than either alone (deterministic host costs), and the CLI flag."""

from __future__ import annotations

import numpy as np
import pytest
from tests.accel_flow.accel_flow_helpers import desc, matmul_module

from loom.driver.compile import compile_driver
from loom.runtime.timing import deterministic_host
from loom.cli import main
from loom.passes.accel_coalesce import expected_coalesced_sends
from loom.runtime.build import load_library
from loom.runtime.host import trace_records

CASES = [("matmul_v3.json", "v3_16", "Cs"), ("matmul_v3.json", "v3_8", "As"), ("matmul_v2.json", "v2_8", "Ns"),
         ("matmul_v4.json", "v4_16", "Cs"),
         # two input and two result banks: late receives overlap the next send and compute
         ("matmul_v4.json", "v4_16_pingpong", "As"), ("matmul_v4.json", "v4_16_pingpong", "Bs")]


def _arrays(M, N, K, seed=0):
    rng = np.random.default_rng(seed)
    A = rng.integers(-8, 8, (M, K)).astype(np.int32)
    B = rng.integers(-8, 8, (K, N)).astype(np.int32)
    C = rng.integers(-8, 8, (M, N)).astype(np.int32)
    return A, B, C, C.astype(np.int64) + A.astype(np.int64) @ B.astype(np.int64)


@pytest.mark.sanitize
@pytest.mark.parametrize("file,name,flow", CASES)
def test_coalesced_double_buffered_equals_numpy(file, name, flow):
    both = compile_driver(matmul_module(), desc(file), name, flow, coalesce=True, double_buffer=True)
    for M, N, K in [(40, 72, 100), (17, 5, 9)]:
        A, B, C, want = _arrays(M, N, K, seed=M)
        stats = both(A, B, C)
        np.testing.assert_array_equal(C.astype(np.int64), want)
        assert stats.transfers.sends == expected_coalesced_sends(both.summary, {"m": M, "n": N, "k": K}, 65536)


def test_large_coalesced_blocks_fit_the_double_buffer_half():
    # K = 2048: one (m, n) tile of v3_16 Cs sends 128 x 513 words; a half holds 32768 words,
    # so the coalesced transactions must split at the half's capacity, not the whole buffer's
    both = compile_driver(matmul_module(), desc("matmul_v3.json"), "v3_16", "Cs", coalesce=True,
                          double_buffer=True)
    A, B, C, want = _arrays(16, 16, 2048)
    stats = both(A, B, C)
    np.testing.assert_array_equal(C.astype(np.int64), want)
    assert stats.transfers.sends >= 3  # 128 * 513 + 1 words > 2 halves' worth
    # by hand: 63 s opcodes fit a half (63 * 513 = 32319 <= 32768 < 64 * 513), so 63 + 63 + 2 (+ r's word)
    sends = [length for kind, length, _ in trace_records(load_library()) if kind == "send"]
    assert sends == [63 * 513, 63 * 513, 2 * 513 + 1]


def test_coalescing_plus_double_buffering_is_fastest():
    lib = load_library()
    totals = {}
    for co in (False, True):
        for db in (False, True):
            drv = compile_driver(matmul_module(), desc("matmul_v3.json"), "v3_16", "Cs", coalesce=co,
                                 double_buffer=db)
            A, B, C, want = _arrays(64, 64, 64)
            with deterministic_host(lib, call_s=50e-9, word_s=2e-9):
                totals[co, db] = drv(A, B, C).timing.total_s
            np.testing.assert_array_equal(C.astype(np.int64), want)
    assert totals[True, True] < totals[True, False] < totals[False, False]
    assert totals[True, True] < totals[False, True] < totals[False, False]


def test_cli_double_buffer_flag(tmp_path, capsys):
    out = tmp_path / "out"
    rc = main(["accel", "compile", "matmul", "--accel", desc("matmul_v3.json"), "--name", "v3_16", "--flow", "Cs",
               "--dims", "M=32,N=32,K=32", "--double-buffer", "--coalesce", "-o", str(out)])
    assert rc == 0
    c = (out / "driver.c").read_text()
    assert "loom_dma_set_double_buffering(1)" in c and "copy_from_outbuffer_deferred_acc_i32" in c
    rc = main(["accel", "run", "matmul", "--accel", desc("matmul_v3.json"), "--name", "v3_8", "--flow", "all",
               "--dims", "M=40,N=24,K=16", "--double-buffer"])
    text = capsys.readouterr().out
    lines = [line for line in text.splitlines() if line.startswith("v3_8")]
    assert rc == 0 and len(lines) == 4 and all(line.endswith("ok") for line in lines)
