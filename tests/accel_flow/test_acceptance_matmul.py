"""Acceptance: every MatMul flow of the notes' table (v1 Ns; v2 Ns, As, Bs; v3 Ns, As, Bs, Cs) for
accelerator sizes 4, 8, 16, plus v4 with non-square flexible tiles, on 64^3, 128^3, 256^3,
(100, 70, 36) and all permutations of (32, 256, 512). Results must equal numpy exactly (int32),
and the trace must show the reuse each flow promises: transactions and words per operand equal
the hand-derived count below (not the driver's own model)."""

import functools
import itertools
from math import ceil

import numpy as np
import pytest
from tests.accel_flow.accel_flow_helpers import desc, f32_description, matmul_arrays, matmul_module, matmul_reference
from xdsl.dialects.builtin import f32

from loom.driver.compile import compile_driver

PROBLEMS = [(64, 64, 64), (128, 128, 128), (256, 256, 256), (100, 70, 36),
            *sorted(set(itertools.permutations((32, 256, 512))))]

FLOWS = {"v1": ["Ns"], "v2": ["Ns", "As", "Bs"], "v3": ["Ns", "As", "Bs", "Cs"]}
CASES = [(f"matmul_{v}.json", f"{v}_{s}", flow, None) for v in FLOWS for s in (4, 8, 16) for flow in FLOWS[v]]
CASES += [("matmul_v4.json", "v4_16_m32n16k64", flow, None) for flow in ("Ns", "As", "Bs", "Cs")]
CASES += [("matmul_v4.json", "v4_16", "Cs", {"m": 48, "n": 16, "k": 32}),
          ("matmul_v4.json", "v4_16", "As", {"m": 16, "n": 64, "k": 32})]


@functools.cache
def driver(path, acc, flow, tiles=None):
    """One compiled driver per (accelerator, flow): sizes are dynamic, it serves every problem."""
    return compile_driver(matmul_module(), path, acc, flow, tile_sizes=dict(tiles) if tiles else None)


def tiles_of(acc, tiles):
    if tiles:
        return tiles["m"], tiles["n"], tiles["k"]
    if acc.startswith("v4_16_m32n16k64"):
        return 32, 16, 64
    s = int(acc.split("_")[1])
    return s, s, s


def hand_count(flow, M, N, K, tm, tn, tk):
    """Transactions and words per operand each flow must produce (padded edge tiles)."""
    gm, gn, gk = ceil(M / tm), ceil(N / tn), ceil(K / tk)
    g3 = gm * gn * gk
    a, b, c = tm * tk, tk * tn, tm * tn
    table = {
        "Ns": dict(A=g3, B=g3, C=g3, sends=g3, recvs=g3),
        "As": dict(A=gm * gk, B=g3, C=g3, sends=gm * gk + g3, recvs=g3),  # A once per (m, k)
        "Bs": dict(A=g3, B=gn * gk, C=g3, sends=gn * gk + g3, recvs=g3),  # B once per (n, k)
        "Cs": dict(A=g3, B=g3, C=gm * gn, sends=g3 + gm * gn, recvs=gm * gn),  # C once per (m, n)
    }[flow]
    return dict(sends=table["sends"], recvs=table["recvs"],
                A=table["A"] * a, B=table["B"] * b, C=table["C"] * c)


@pytest.mark.parametrize("path,acc,flow,tiles", CASES, ids=lambda v: v if isinstance(v, str) else None)
def test_flow_matches_numpy_and_reuse_on_every_problem(path, acc, flow, tiles):
    frozen = tuple(sorted(tiles.items())) if tiles else None
    drv = driver(desc(path), acc, flow, frozen)
    tm, tn, tk = tiles_of(acc, tiles)
    for M, N, K in PROBLEMS:
        A, B, C = matmul_arrays(M, N, K, seed=M + N + K)
        expected = matmul_reference(A, B, C)
        run = drv(A, B, C)
        assert np.array_equal(C, expected.astype(np.int32)), (acc, flow, M, N, K)
        want = hand_count(flow, M, N, K, tm, tn, tk)
        t = run.transfers
        got = dict(sends=t.sends, recvs=t.recvs, A=t.operand_words_sent["A"], B=t.operand_words_sent["B"],
                   C=t.operand_words_received["C"])
        assert got == want, (acc, flow, M, N, K)


def test_v3_as_128_tile16_sends_each_a_tile_once_per_mk_pair():
    drv = driver(desc("matmul_v3.json"), "v3_16", "As")
    A, B, C = matmul_arrays(128, 128, 128)
    t = drv(A, B, C).transfers
    assert t.operand_words_sent["A"] == 8 * 8 * 256  # 64 (m, k) pairs, one 16x16 tile each
    assert t.operand_words_sent["B"] == 8 * 8 * 8 * 256
    assert t.operand_bytes()["A"] == 4 * 8 * 8 * 256
    # the driver's own analytic model agrees with the trace
    assert drv.summary.expected_transfers({"m": 128, "n": 128, "k": 128}) == t


@pytest.mark.parametrize("source,acc,flow,tiles", CASES, ids=lambda v: v if isinstance(v, str) else None)
def test_f32_within_tolerance(tmp_path_factory, source, acc, flow, tiles):
    """Every flow of the table (and v4) on f32 data: within tolerance of a float64 numpy reference."""
    path = f32_description(tmp_path_factory.mktemp("f32"), source)
    drv = compile_driver(matmul_module(elem=f32), path, acc, flow, tile_sizes=tiles)
    rng = np.random.default_rng(3)
    for M, N, K in [(64, 64, 64), (100, 70, 36), (32, 256, 512)]:
        A, B, C = (rng.standard_normal(s).astype(np.float32) for s in ((M, K), (K, N), (M, N)))
        expected = C.astype(np.float64) + A.astype(np.float64) @ B.astype(np.float64)
        drv(A, B, C)
        np.testing.assert_allclose(C, expected, rtol=1e-4, atol=1e-4)


SANITIZE_CASES = [("matmul_v1.json", "v1_4", "Ns", None), ("matmul_v2.json", "v2_8", "As", None),
                  ("matmul_v3.json", "v3_16", "Bs", None), ("matmul_v3.json", "v3_4", "Cs", None),
                  ("matmul_v4.json", "v4_16", "Cs", {"m": 48, "n": 16, "k": 32})]


@pytest.mark.sanitize
@pytest.mark.parametrize("path,acc,flow,tiles", SANITIZE_CASES, ids=lambda v: v if isinstance(v, str) else None)
def test_generated_drivers_small_problems(path, acc, flow, tiles):
    """A representative subset for the ASan/UBSan session (also runs in the normal one)."""
    drv = compile_driver(matmul_module(), desc(path), acc, flow, tile_sizes=tiles)
    tm, tn, tk = tiles_of(acc, tiles)
    for M, N, K in [(100, 70, 36), (32, 64, 48)]:
        A, B, C = matmul_arrays(M, N, K)
        expected = matmul_reference(A, B, C)
        t = drv(A, B, C).transfers
        assert np.array_equal(C, expected.astype(np.int32))
        want = hand_count(flow, M, N, K, tm, tn, tk)
        assert (t.sends, t.recvs, t.operand_words_sent["A"]) == (want["sends"], want["recvs"], want["A"])
