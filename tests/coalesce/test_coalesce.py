"""accel-coalesce: same results as numpy on every flow, fewer send transactions, exact counts."""

from __future__ import annotations

import json

import numpy as np
import pytest
from tests.accel_flow.accel_flow_helpers import conv_module, desc, matmul_module

from loom.driver.compile import compile_driver
from loom.errors import LoomError
from loom.passes import Pipeline
from loom.passes.accel_coalesce import expected_coalesced_sends
from loom.runtime.build import load_library
from loom.runtime.host import trace_records

ACCELS = [("matmul_v1.json", "v1_8"), ("matmul_v2.json", "v2_8"), ("matmul_v3.json", "v3_16"),
          ("matmul_v4.json", "v4_16")]
def _flows(file: str, name: str) -> list[str]:
    accs = json.load(open(desc(file)))["accelerators"]
    return list(next(a for a in accs if a["name"] == name)["opcode_flows"])


CASES = [(f, a, flow) for f, a in ACCELS for flow in _flows(f, a)]


def _run(drv, M, N, K, dtype=np.int32, seed=0):
    rng = np.random.default_rng(seed)
    A = rng.integers(-8, 8, (M, K)).astype(dtype)
    B = rng.integers(-8, 8, (K, N)).astype(dtype)
    C = rng.integers(-8, 8, (M, N)).astype(dtype)
    want = C.astype(np.int64) + A.astype(np.int64) @ B.astype(np.int64)
    stats = drv(A, B, C)
    np.testing.assert_array_equal(C.astype(np.int64), want)
    return stats


@pytest.mark.parametrize("file,name,flow", CASES)
def test_results_equal_numpy_and_fewer_sends(file, name, flow):
    module = matmul_module()
    M, N, K = 40, 72, 100  # not multiples of the tiles: padded edge tiles too
    plain = compile_driver(module, desc(file), name, flow)
    merged = compile_driver(module, desc(file), name, flow, coalesce=True)
    s0, s1 = _run(plain, M, N, K), _run(merged, M, N, K)
    problem = {"m": M, "n": N, "k": K}
    # the same words cross the DMA, in fewer (never more) send transactions
    assert s1.transfers.words_sent == s0.transfers.words_sent
    assert s1.transfers.recvs == s0.transfers.recvs
    assert s1.transfers.sends <= s0.transfers.sends
    # exact count: one send per receive here (every flow ends its sends with a receive)
    assert s1.transfers.sends == expected_coalesced_sends(merged.summary, problem, 65536)
    assert s1.transfers.sends == s1.transfers.recvs


def test_c_stationary_hand_count():
    # v3 Cs ((s) r): per (m, n) tile K/16 sends of s plus one of r today; one when coalesced
    drv = compile_driver(matmul_module(), desc("matmul_v3.json"), "v3_16", "Cs", coalesce=True)
    stats = _run(drv, 32, 48, 64)
    assert stats.transfers.sends == 2 * 3
    records = trace_records(load_library())
    sends = [length for kind, length, _ in records if kind == "send"]
    assert sends == [4 * (1 + 256 + 256) + 1] * 6  # four s opcodes + the literal 8 of r


def test_capacity_splits_between_blocks():
    # at most 600 words per transaction: each 513-word s opcode goes alone, r joins the last one
    drv = compile_driver(matmul_module(), desc("matmul_v3.json"), "v3_16", "Cs", coalesce=True,
                         coalesce_max_words=600)
    stats = _run(drv, 32, 32, 64)
    assert stats.transfers.sends == 4 * 4 == expected_coalesced_sends(drv.summary, {"m": 32, "n": 32, "k": 64}, 600)
    sends = [length for kind, length, _ in trace_records(load_library()) if kind == "send"]
    assert sends == [513, 513, 513, 514] * 4


def test_coalesced_conv():
    conv = compile_driver(conv_module(1), desc("conv2d.json"), coalesce=True)
    plain = compile_driver(conv_module(1), desc("conv2d.json"))
    rng = np.random.default_rng(1)
    I = rng.integers(-4, 4, (1, 4, 6, 7)).astype(np.int32)
    W = rng.integers(-4, 4, (3, 4, 3, 3)).astype(np.int32)
    O = np.zeros((1, 3, 4, 5), np.int32)
    want = np.zeros((1, 3, 4, 5), np.int64)
    for oc in range(3):
        for y in range(4):
            for x in range(5):
                want[0, oc, y, x] = (I[0, :, y:y + 3, x:x + 3].astype(np.int64) * W[oc]).sum()
    out = O.copy()
    stats = conv(I, W, out)
    np.testing.assert_array_equal(out, want)
    base = plain(I, W, O.copy())
    # every opcode before the plane receive merges into one transaction per output channel
    assert stats.transfers.sends == stats.transfers.recvs == 3 < base.transfers.sends
    assert stats.transfers.words_sent == base.transfers.words_sent


@pytest.mark.sanitize
@pytest.mark.parametrize("stride", [1, 2])
def test_a_capacity_split_never_separates_a_conv_opcode_from_its_window(stride):
    """At most 100 words per transaction: params (4) + filter (1 + 36) + window (1 + 36) = 78, and the next
    window's opcode word would still fit; it goes out with its window in the next transaction, every
    transaction holds whole instructions (as the hand-written driver stages them) and the count is the
    analytic one."""
    from xdsl.dialects.builtin import i32

    from loom.examples.accel_kernels import BUILTINS, conv_reference
    dims = {"B": 1, "C": 4, "F": 3, "H": 7, "W": 7, "R": 3, "S": stride}
    drv = compile_driver(BUILTINS["conv2d"].build(dims, i32), desc("conv2d.json"), coalesce=True,
                         coalesce_max_words=100)
    rng = np.random.default_rng(stride)
    I, W, O = (rng.integers(-4, 4, sh).astype(np.int32) for sh in BUILTINS["conv2d"].shapes(dims))  # noqa: E741
    want = conv_reference(I, W, O, stride)
    stats = drv(I, W, O)
    np.testing.assert_array_equal(O, want)
    sends = [length for kind, length, _ in trace_records(load_library()) if kind == "send"]
    o = (7 - 3) // stride + 1
    assert sends[0] == 4 + 37 + 37 and max(sends) <= 100 and sum(sends) == 4 + 3 * (37 + 37 * o * o + 1)
    # whole instructions of 37 words (the first also holds the 4 parameter words, a channel's last also the 8)
    assert all((n - 4 * (k == 0)) % 37 in (0, 1) for k, n in enumerate(sends)), sends
    assert stats.transfers.sends == len(sends) == expected_coalesced_sends(drv.summary, drv.problem_dims([I, W, O]),
                                                                           100)


def test_bad_option_is_a_loom_error():
    with pytest.raises(LoomError, match="max-words"):
        compile_driver(matmul_module(), desc("matmul_v3.json"), "v3_16", "Cs", coalesce=True,
                       coalesce_max_words=-5)
    with pytest.raises(LoomError):
        Pipeline.parse("accel-coalesce{max-words=x}")
