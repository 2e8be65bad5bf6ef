"""Seeded random engines of the kinds a researcher brings (tests/accel_flow/researcher): MatMul
engines with random tiles of 1..7 in each flow (generic model) and weight-stationary NHWC conv engines
with random tiles and "full" filter dims (their own model), on random problem sizes that are rarely
multiples of the tiles, static or dynamic shapes, coalesced / double-buffered / inline copies at random;
each result against numpy and the words moved against the analytic count. Bounded for CI;
``LOOM_FUZZ_SCALE`` multiplies the counts."""

from __future__ import annotations

import json

import numpy as np
import pytest
from xdsl.dialects.builtin import i32

from loom.driver import compile_driver
from tests.accel_flow.accel_flow_helpers import D, matmul_module
from tests.accel_flow.test_researcher_descriptions import HERE, _conv_nhwc
from tests.fuzz.accel_mutator import FUZZ_SCALE

pytestmark = pytest.mark.sanitize

FLOWS = {  # flow: (flow entry, opcode map, generic-model semantics)
    "Cs": ({"flow": "((mac) drain)"},
           "opcode_map<mac=[send_literal(2), send(0), send(1)], drain=[send_literal(3), recv(2)]>",
           {"mac": "load 0, load 1, compute", "drain": "store 2, clear 2"}),
    "As": ({"flow": "(sA (sBr))", "permutation": "(m, n, k) -> (m, k, n)", "accumulate_on_cpu": True},
           "opcode_map<sA=[send_literal(1), send(0)], sBr=[send_literal(6), send(1), recv(2)]>",
           {"sA": "load 0", "sBr": "load 1, compute, store 2, clear 2"}),
    "Bs": ({"flow": "(sB (sAr))", "permutation": "(m, n, k) -> (n, k, m)", "accumulate_on_cpu": True},
           "opcode_map<sB=[send_literal(2), send(1)], sAr=[send_literal(5), send(0), recv(2)]>",
           {"sB": "load 1", "sAr": "load 0, compute, store 2, clear 2"}),
    "Ns": ({"flow": "(s r)", "accumulate_on_cpu": True},
           "opcode_map<s=[send_literal(7), send(0), send(1)], r=[send_literal(8), recv(2)]>",
           {"s": "load 0, load 1, compute", "r": "store 2, clear 2"}),
}
DMA = {"dma_address": "0x40400000", "input_address": "0x16000000", "input_size": 4096,
       "output_address": "0x16400000", "output_size": 4096}


def _options(rng) -> dict:
    return {"coalesce": bool(rng.integers(2)), "double_buffer": bool(rng.integers(2)),
            "inline_copies": bool(rng.integers(2))}


def test_random_matmul_engines(tmp_path):
    rng = np.random.default_rng(11)
    for case in range(6 * FUZZ_SCALE):
        flow = list(FLOWS)[case % 4]
        entry, omap, semantics = FLOWS[flow]
        tm, tn, tk = (int(x) for x in rng.integers(1, 8, 3))
        M, N, K = (int(x) for x in rng.integers(1, 20, 3))
        static, options = bool(rng.integers(2)), _options(rng)
        path = tmp_path / f"mm{case}.json"
        path.write_text(json.dumps({"accelerators": [{
            "name": "fz", "kernel": "matmul", "data_type": "i32", "model": "generic", "dma": DMA,
            "dims": ["m", "n", "k"], "tile_sizes": {"m": tm, "n": tn, "k": tk}, "opcode_map": omap,
            "opcode_semantics": semantics, "opcode_flows": {flow: entry}}]}))
        label = f"case {case}: {tm}x{tn}x{tk} tiles, {M}x{N}x{K}, {flow}, static={static}, {options}"
        drv = compile_driver(matmul_module(i32, (M, N, K) if static else (D, D, D)), str(path), **options)
        A, B, C0 = (rng.integers(-9, 9, s).astype(np.int32) for s in ((M, K), (K, N), (M, N)))
        C = C0.copy()
        got = drv(A, B, C).transfers
        want = drv.expected_transfers([A, B, C])
        assert np.array_equal(C, C0 + A @ B), label
        assert (got.words_sent, got.words_received) == (want.words_sent, want.words_received), label


def test_random_weight_stationary_conv_engines(tmp_path):
    rng = np.random.default_rng(12)
    data = json.loads((HERE / "conv_nhwc_ws.json").read_text())
    acc = data["accelerators"][0]
    acc["model"] = {"python": str(HERE / "models.py") + ":ConvNHWC"}
    for case in range(4 * FUZZ_SCALE):
        tiles = {d: int(rng.integers(1, 5)) for d in ("b", "oh", "ow", "oc", "ic")}
        acc["tile_sizes"] = {**tiles, "fh": "full", "fw": "full"}
        path = tmp_path / f"conv{case}.json"
        path.write_text(json.dumps(data))
        B, OH, OW, OC, IC, FH, FW = (int(rng.integers(1, 7)) for _ in range(7))
        I = rng.integers(-5, 5, (B, OH + FH - 1, OW + FW - 1, IC)).astype(np.int32)  # noqa: E741
        W = rng.integers(-5, 5, (FH, FW, IC, OC)).astype(np.int32)
        O0 = rng.integers(-5, 5, (B, OH, OW, OC)).astype(np.int32)
        want = O0.astype(np.int64)
        for y in range(FH):
            for x in range(FW):
                want += np.einsum("bhwc,cf->bhwf", I[:, y:y + OH, x:x + OW, :], W[y, x])
        options = _options(rng)
        label = f"case {case}: tiles {tiles}, {I.shape} * {W.shape}, {options}"
        drv = compile_driver(_conv_nhwc([I.shape, W.shape, O0.shape]), str(path), **options)
        O = O0.copy()  # noqa: E741
        got = drv(I, W, O).transfers
        assert np.array_equal(O, want), label
        assert got.words_sent == drv.expected_transfers([I, W, O]).words_sent, label
