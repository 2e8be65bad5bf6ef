"""The standalone harness (what valgrind runs): prints "ok" and a checksum
that equals the checksum of numpy's result on the same pseudo-random inputs
(the xorshift32 generator is re-implemented here), and fails loudly."""

from __future__ import annotations

import subprocess

from tests.perf.manual_drivers import manual
import numpy as np
import pytest
from numpy.lib.stride_tricks import sliding_window_view

pytestmark = pytest.mark.sanitize
MASK = 0xFFFFFFFF


def xorshift_words(state: int, n: int) -> tuple[np.ndarray, int]:
    out = np.empty(n, np.uint32)
    for i in range(n):
        state ^= (state << 13) & MASK
        state ^= state >> 17
        state ^= (state << 5) & MASK
        out[i] = state
    return out, state


def fnv1a(words: np.ndarray) -> int:
    h = 2166136261
    for w in words.ravel().view(np.uint32).tolist():
        h = ((h ^ w) * 16777619) & MASK
    return h


def run(cmd):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=60)


def matmul_inputs(M, N, K):
    state = 0x9E3779B9 ^ ((M * 73856093 + N * 19349663 + K * 83492791) & MASK)
    A, state = xorshift_words(state, M * K)
    B, state = xorshift_words(state, K * N)
    C, state = xorshift_words(state, M * N)
    return A.reshape(M, K).astype(np.uint64), B.reshape(K, N).astype(np.uint64), C.reshape(M, N).astype(np.uint64)


@pytest.mark.parametrize("version,tile", [(1, 4), (2, 8), (3, 16), (4, 48)])
def test_matmul_checksum_matches_numpy(harness, version, tile):
    M, N, K = 21, 13, 30
    A, B, C = matmul_inputs(M, N, K)
    repeat = 2
    expected = ((C + repeat * (A @ B)) & MASK).astype(np.uint32)
    result = run([str(harness), "matmul", f"v{version}", str(M), str(N), str(K), str(tile), "--repeat", str(repeat)])
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"ok checksum=0x{fnv1a(expected):08x}"


def test_conv_checksum_matches_numpy(harness):
    batch, iC, H, W, oC, f, s = 1, 3, 7, 6, 2, 3, 2
    state = 0x85EBCA6B ^ ((iC * 73856093 + H * 19349663 + oC * 83492791 + f) & MASK)
    inp, state = xorshift_words(state, batch * iC * H * W)
    flt, state = xorshift_words(state, oC * iC * f * f)
    oH, oW = (H - f) // s + 1, (W - f) // s + 1
    out, state = xorshift_words(state, batch * oC * oH * oW)
    windows = sliding_window_view(inp.reshape(batch, iC, H, W).astype(np.uint64), (f, f), axis=(2, 3))[:, :, ::s, ::s]
    prod = np.einsum("nchwij,ocij->nohw", windows, flt.reshape(oC, iC, f, f).astype(np.uint64))
    expected = ((out.reshape(prod.shape).astype(np.uint64) + prod) & MASK).astype(np.uint32)
    result = run(manual.conv_command(batch, iC, H, W, oC, f, s))
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"ok checksum=0x{fnv1a(expected):08x}"


def test_baseline_mode_runs_no_driver(harness):
    _, _, C = matmul_inputs(9, 9, 9)
    result = run(manual.matmul_command(3, 9, 9, 9, 8, "--baseline"))
    assert result.stdout.strip() == f"ok checksum=0x{fnv1a(C.astype(np.uint32)):08x}"


def test_failures_exit_non_zero(harness):
    usage = run([str(harness), "matmul", "v7", "4", "4", "4", "4"])
    assert usage.returncode == 2 and "usage" in usage.stderr
    bad_tile = run([str(harness), "matmul", "v3", "8", "8", "8", "5"])
    assert bad_tile.returncode == 3 and "size 5" in bad_tile.stderr
    bad_v4_tile = run([str(harness), "matmul", "v4", "8", "8", "8", "24"])
    assert bad_v4_tile.returncode == 3 and "runtime error 9" in bad_v4_tile.stderr
    assert run(manual.conv_command(1, 3, 2, 2, 1, 3, 1)).returncode == 2


@pytest.mark.parametrize("args", [("matmul", "v4", "40", "20", "50", "32"), ("conv", "2", "3", "7", "6", "2", "3", "2"),
                                  ("matmul", "v3", "20", "13", "30", "8", "--flow", "Bs", "--coalesce",
                                   "--double-buffer"),
                                  ("conv", "1", "3", "7", "6", "2", "3", "2", "--coalesce", "--double-buffer")])
def test_harness_is_clean_under_memcheck(harness, args):
    from loom.runtime.build import sanitizing

    if sanitizing():
        pytest.skip("valgrind cannot run ASan-instrumented executables")
    result = run(["valgrind", "-q", "--error-exitcode=99", "--leak-check=full", str(harness), *args])
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("ok checksum=")
