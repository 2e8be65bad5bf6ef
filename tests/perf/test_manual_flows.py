"""Every hand-written flow (v1 Ns; v2 Ns/As/Bs; v3, v4 Ns/As/Bs/Cs; conv), plain,
coalesced and double-buffered, equals numpy exactly (int32 wrap-around) on
sizes that are not multiples of the tile, and moves the transactions its flow
implies: one send per instruction, or one per run of instructions up to a
receive when coalescing; double buffering changes no count."""

from __future__ import annotations

from math import ceil

import numpy as np
import pytest

from loom.errors import LoomError
from loom.runtime.host import trace_counters
from tests.perf.manual_drivers import manual
from tests.perf.test_manual_conv import conv_reference, out_shape
from tests.perf.test_manual_harness import fnv1a, matmul_inputs, run
from tests.perf.test_manual_matmul import problem, wrap_matmul_acc

pytestmark = pytest.mark.sanitize

OPTIONS = [(False, False), (True, False), (False, True), (True, True)]  # (coalesce, double_buffer)
CASES = [(v, flow) for v, flows in manual.FLOWS.items() for flow in flows]


@pytest.mark.parametrize("coalesce,double_buffer", OPTIONS)
@pytest.mark.parametrize("version,flow", CASES)
def test_flow_equals_numpy_on_odd_sizes(drivers, version, flow, coalesce, double_buffer):
    tile = 32 if version == 4 else 8
    for M, N, K in [(37, 29, 41), (5, 3, 7)]:
        A, B, C = problem(M, N, K, seed=version * 7 + M)
        expected = wrap_matmul_acc(A, B, C)
        manual.matmul(version, flow, A, B, C, tile, coalesce=coalesce, double_buffer=double_buffer, lib=drivers)
        np.testing.assert_array_equal(C, expected)


@pytest.mark.parametrize("flow", ["As", "Cs"])
def test_v4_non_square_tiles_equal_numpy(drivers, flow):
    A, B, C = problem(70, 50, 90, seed=11)
    expected = wrap_matmul_acc(A, B, C)
    manual.matmul(4, flow, A, B, C, (32, 16, 64), coalesce=True, double_buffer=True, lib=drivers)
    np.testing.assert_array_equal(C, expected)


@pytest.mark.parametrize("flow", ["Ns", "As", "Bs", "Cs"])
def test_f32_flows_small_integers_exact(drivers, flow):
    rng = np.random.default_rng(5)
    A, B, C = (rng.integers(-8, 9, s).astype(np.float32) for s in ((19, 23), (23, 17), (19, 17)))
    expected = (C.astype(np.float64) + A.astype(np.float64) @ B.astype(np.float64)).astype(np.float32)
    manual.matmul(3, flow, A, B, C, 8, coalesce=True, double_buffer=True, lib=drivers)
    np.testing.assert_array_equal(C, expected)


def expected_transactions(flow: str, mt: int, nt: int, kt: int, coalesce: bool) -> tuple[int, int]:
    """(sends, receives) of one run over mt x nt x kt tiles."""
    if flow == "Ns":
        return mt * nt * kt, mt * nt * kt
    if flow in ("As", "Bs"):  # the stationary tile's load joins the first step's send when coalescing
        outer = mt if flow == "As" else nt
        inner = nt if flow == "As" else mt
        return outer * kt * (inner + (0 if coalesce else 1)), outer * kt * inner
    return mt * nt * (1 if coalesce else kt + 1), mt * nt  # Cs: k steps and "send C", then one receive


@pytest.mark.parametrize("coalesce,double_buffer", OPTIONS)
@pytest.mark.parametrize("flow", ["Ns", "As", "Bs", "Cs"])
def test_v3_transactions_per_flow(drivers, flow, coalesce, double_buffer):
    M, N, K, T = 44, 30, 20, 8
    mt, nt, kt = ceil(M / T), ceil(N / T), ceil(K / T)
    A, B, C = problem(M, N, K, seed=3)
    manual.matmul(3, flow, A, B, C, T, coalesce=coalesce, double_buffer=double_buffer, lib=drivers)
    counters = trace_counters(drivers)
    sends, recvs = expected_transactions(flow, mt, nt, kt, coalesce)
    tile_words = T * T
    words = {"Ns": mt * nt * kt * (1 + 2 * tile_words),
             "As": mt * kt * (1 + tile_words) + mt * kt * nt * (1 + tile_words),
             "Bs": nt * kt * (1 + tile_words) + nt * kt * mt * (1 + tile_words),
             "Cs": mt * nt * kt * (1 + 2 * tile_words) + mt * nt}[flow]
    assert (counters["sends"], counters["recvs"]) == (sends, recvs)
    assert counters["words_sent"] == words
    assert counters["words_received"] == recvs * tile_words


@pytest.mark.parametrize("coalesce,double_buffer", OPTIONS)
@pytest.mark.parametrize("layer", [(2, 3, 7, 8, 4, 3, 2), (1, 5, 6, 6, 3, 1, 1)])
def test_conv_options_equal_numpy_and_protocol(drivers, layer, coalesce, double_buffer):
    batch, iC, H, W, oC, f, s = layer
    rng = np.random.default_rng(iC + f)
    big = lambda shape: rng.integers(-(2**31), 2**31, shape, dtype=np.int64).astype(np.int32)
    inp, weights = big((batch, iC, H, W)), big((oC, iC, f, f))
    shape = out_shape(batch, oC, H, W, f, s)
    out = big(shape)
    expected = conv_reference(inp, weights, out, s)
    manual.conv_os(inp, weights, out, s, lib=drivers, coalesce=coalesce, double_buffer=double_buffer)
    np.testing.assert_array_equal(out, expected)
    planes, pixels = batch * oC, shape[2] * shape[3]
    counters = trace_counters(drivers)
    # coalesced: everything before each plane's receive (the parameters join the first) is one send
    assert counters["sends"] == (planes if coalesce else 2 + planes * (pixels + 2))
    assert counters["words_sent"] == 4 + planes * ((1 + iC * f * f) * (1 + pixels) + 1)
    assert counters["recvs"] == planes


def test_coalesced_sends_split_at_the_staging_capacity(drivers):
    """Cs on v4 with 64 x 64 tiles: 8192 words per k step, so a 65536-word buffer (32768 when
    double buffering) holds 7 (3) steps per send; the results stay exact."""
    M = N = 64
    K = 64 * 10
    for double_buffer, per_send in [(False, 7), (True, 3)]:
        drivers.loom_trace_reset()
        A, B, C = problem(M, N, K, seed=9)
        expected = wrap_matmul_acc(A, B, C)
        manual.matmul(4, "Cs", A, B, C, 64, coalesce=True, double_buffer=double_buffer, lib=drivers)
        np.testing.assert_array_equal(C, expected)
        assert trace_counters(drivers)["sends"] == ceil(10 / per_send)


@pytest.mark.parametrize("options", [["--flow", "Bs", "--coalesce"], ["--flow", "Cs", "--double-buffer"],
                                     ["--flow", "As", "--coalesce", "--double-buffer"]])
def test_harness_flows_checksum_matches_numpy(harness, options):
    M, N, K = 21, 13, 30
    A, B, C = matmul_inputs(M, N, K)
    expected = ((C + A @ B) & 0xFFFFFFFF).astype(np.uint32)
    result = run([str(harness), "matmul", "v3", str(M), str(N), str(K), "8", *options])
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"ok checksum=0x{fnv1a(expected):08x}"


def test_unknown_flow_is_an_error(drivers, harness):
    A, B, C = problem(8, 8, 8, seed=1)
    with pytest.raises(LoomError, match="v2 has flows"):
        manual.matmul(2, "Cs", A, B, C, 8, lib=drivers)
    result = run([str(harness), "matmul", "v1", "8", "8", "8", "8", "--flow", "As"])
    assert result.returncode == 3 and "bad sizes or tile" in result.stderr
    assert run([str(harness), "matmul", "v3", "8", "8", "8", "8", "--flow", "Xs"]).returncode == 2
