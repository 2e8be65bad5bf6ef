"""The RTL MatMul (loom/examples/accelerators/rtl/matmul_os.sv) driven directly through its
loom_model.h shared object: v3 instruction streams against a numpy reference of the protocol,
exact cycle counts, AXI-Stream back-pressure, protocol errors and a bounded fuzz of word streams."""

from __future__ import annotations

import subprocess
import time

import numpy as np
import pytest

from loom.errors import LoomError
from loom.runtime.rtl import build_rtl_model, find_verilator
from tests.rtl.rtl_helpers import (COMPUTE, READ_A, READ_B, SEND, SOURCE, RtlDevice, V3Reference,
                                   instruction_words, model_so, require_verilator)


def tiles(rng, t, n=1):
    return [rng.integers(-2**31, 2**31, size=(t, t), dtype=np.int64).astype(np.int32) for _ in range(n)]


@pytest.mark.parametrize("tile", [4, 8])
def test_design_is_lint_clean(tile):
    require_verilator()
    tool = find_verilator()
    out = subprocess.run([str(tool.executable), "--lint-only", "-Wall", f"-GT={tile}", "--top-module",
                          "matmul_os", str(SOURCE)], capture_output=True, text=True, env=tool.env())
    assert out.returncode == 0, out.stderr


@pytest.mark.parametrize("tile", [4, 8])
def test_one_instruction_equals_numpy_in_exact_cycles(tile):
    rng = np.random.default_rng(tile)
    a, b = tiles(rng, tile, 2)
    with RtlDevice(model_so(tile)) as dev:
        dev.send(instruction_words(15, a, b))
        assert dev.pending() == tile * tile
        got = dev.receive(tile * tile).reshape(tile, tile)
        ref = V3Reference(tile)
        ref.run(15, a, b)
        np.testing.assert_array_equal(got, ref.out[0])  # i32 wrap-around included
        # zero-bubble pipeline: 1 + 2 T^2 words in, T compute cycles (T^2 MACs each), T^2 words out
        assert dev.cycles == 1 + 2 * tile * tile + tile + tile * tile
        assert dev.macs == tile ** 3


# The opcode patterns of the four v3 flows (As: sA then sBcCrC...; Cs: sABcC over k then sendC).
PATTERNS = {"Ns": [15, 15, 15], "As": [1, 14, 14, 14], "Bs": [2, 13, 13], "Cs": [7, 7, 7, 8], "mixed": [3, 4, 4, 8, 5, 12]}


@pytest.mark.parametrize("pattern", sorted(PATTERNS))
@pytest.mark.parametrize("stall", [0, 35])
def test_flow_patterns_equal_the_reference(pattern, stall):
    t = 4
    rng = np.random.default_rng(len(pattern) + stall)
    ref = V3Reference(t)
    got, expected_cycles = [], 0
    with RtlDevice(model_so(t)) as dev:
        dev.stalls(stall, seed=7)
        for opcode in PATTERNS[pattern]:
            a, b = tiles(rng, t, 2)
            ref.run(opcode, a, b)
            words = instruction_words(opcode, a, b)
            dev.send(words)
            expected_cycles += len(words) + t * bool(opcode & COMPUTE) + t * t * bool(opcode & SEND)
            if dev.pending():
                got.append(dev.receive(dev.pending()).reshape(t, t))
        assert len(got) == len(ref.out)
        for g, r in zip(got, ref.out):
            np.testing.assert_array_equal(g, r)
        if stall:
            assert dev.cycles > expected_cycles  # gaps and back-pressure cost cycles, not words
        else:
            assert dev.cycles == expected_cycles


def test_opcode_and_its_block_may_come_in_separate_sends():
    t = 4
    rng = np.random.default_rng(3)
    a, b = tiles(rng, t, 2)
    with RtlDevice(model_so(t)) as dev:
        dev.send([READ_A | READ_B | COMPUTE | SEND])
        dev.send(a.ravel())
        dev.send(b.ravel())
        np.testing.assert_array_equal(dev.receive(16).reshape(t, t), (a.astype(np.int64) @ b).astype(np.int32))


@pytest.mark.parametrize("words,message", [
    ([0], r"^loom_model_consume: unknown opcode 0 \(send #1, word 0\)"),  # no accelerator name: the runtime adds it
    ([16], r"unknown opcode 16 \(send #1, word 0\)"),
    ([2**31 + 1], r"unknown opcode 2147483649"),
    ([4], r"compute before A was loaded \(send #1, word 0\)"),
    ([1] + [5] * 16 + [4], r"compute before B was loaded \(send #1, word 17\)"),
    ([1, 5, 5, 5], r"tlast after 3 words of an operand block \(send #1, word 3\): short transfer"),
])
def test_protocol_errors_name_the_send_and_word(words, message):
    with RtlDevice(model_so(4)) as dev:
        with pytest.raises(LoomError, match=message):
            dev.send(words)
        with pytest.raises(LoomError, match=r"send #2"):  # the design stays in its error state
            dev.send([15])


@pytest.mark.parametrize("words,code", [([0], 1), ([1, 5, 5], 2), ([4], 7)])
def test_errors_return_the_runtime_error_codes(words, code):
    with RtlDevice(model_so(4)) as dev:
        assert dev.send_code(words) == code  # LOOM_ERR_UNKNOWN_OPCODE, _TRANSFER_LENGTH, _STATE


def test_idle_reports_a_half_read_instruction():
    with RtlDevice(model_so(4)) as dev:
        assert dev.idle() == (0, "")
        dev.send([READ_A | READ_B])
        dev.send(np.arange(16))  # A complete, B still expected
        code, message = dev.idle()
        assert code == 2 and "opcode 3 is half-read" in message and "after send #2" in message
        dev.send(np.arange(16))
        assert dev.idle() == (0, "")


def test_produce_more_than_ready_is_an_error():
    with RtlDevice(model_so(4)) as dev:
        with pytest.raises(LoomError, match=r"produce of 4 words but 0 are ready"):
            dev.receive(4)


def test_fuzzed_word_streams_never_crash():
    """Seeded mutator: valid instruction streams with words flipped, dropped or duplicated, cut into
    random sends. Every outcome is words out or a LoomError; never a crash or a hang."""
    t = 4
    rng = np.random.default_rng(2024)
    outcomes = {"ok": 0, "error": 0}
    for _ in range(60):
        words: list[int] = []
        for opcode in rng.choice([1, 2, 3, 7, 8, 13, 14, 15], size=int(rng.integers(1, 5))):
            words += instruction_words(int(opcode), *tiles(rng, t, 2))
        for _ in range(int(rng.integers(0, 4))):
            k = int(rng.integers(0, len(words)))
            kind = rng.integers(0, 3)
            if kind == 0:
                words[k] = int(rng.integers(0, 2**32))
            elif kind == 1 and len(words) > 1:
                del words[k]
            else:
                words.insert(k, words[k])
        cuts = sorted(set(int(c) for c in rng.integers(1, len(words), size=int(rng.integers(0, 3))))) if len(words) > 1 else []
        with RtlDevice(model_so(t)) as dev:
            dev.stalls(int(rng.integers(0, 50)), seed=int(rng.integers(1, 2**32)))
            try:
                for part in np.split(np.array(words, dtype=np.int64), cuts):
                    dev.send(part)
                    if dev.pending():
                        dev.receive(dev.pending())
                outcomes["ok"] += 1
            except LoomError as err:
                assert err.where in ("loom_model_consume", "loom_model_produce") and str(err), err
                outcomes["error"] += 1
    assert outcomes["ok"] and outcomes["error"]  # both kinds of outcome were exercised


def test_build_is_cached_by_content():
    first = model_so(4)
    start = time.perf_counter()
    again = build_rtl_model([SOURCE], "matmul_os", {"T": 4})
    assert again == first and time.perf_counter() - start < 2.0
    assert build_rtl_model([SOURCE], "matmul_os", {"T": 4}) != model_so(8)


@pytest.mark.parametrize("kwargs,message", [
    ({"sv_paths": [], "top": "matmul_os"}, "no SystemVerilog source"),
    ({"sv_paths": ["/nonexistent/x.sv"], "top": "matmul_os"}, "does not exist"),
    ({"sv_paths": [SOURCE], "top": "matmul os"}, "not a Verilog identifier"),
    ({"sv_paths": [SOURCE], "top": "matmul_os", "parameters": {"T": 1.5}}, "expected an integer or a string"),
    ({"sv_paths": [SOURCE], "top": "no_such_module"}, "Verilator failed"),
])
def test_bad_build_requests_are_loom_errors(kwargs, message):
    require_verilator()
    with pytest.raises(LoomError, match=message):
        build_rtl_model(**kwargs)


def test_the_cache_key_follows_content_not_paths(tmp_path, monkeypatch):
    """Without building: the key changes with the design's text and its parameters, not with where it lies."""
    require_verilator()
    from loom.core import compile_cache

    keys = []
    monkeypatch.setattr(compile_cache, "cached_object", lambda key, build, suffix=".so": keys.append(key) or key)
    copy = tmp_path / "matmul_os.sv"
    copy.write_text(SOURCE.read_text())
    edited = tmp_path / "edited" / "matmul_os.sv"
    edited.parent.mkdir()
    edited.write_text(SOURCE.read_text() + "\n// an edit\n")
    build_rtl_model([SOURCE], "matmul_os", {"T": 4})
    build_rtl_model([copy], "matmul_os", {"T": 4})
    build_rtl_model([edited], "matmul_os", {"T": 4})
    build_rtl_model([SOURCE], "matmul_os", {"T": 8})
    assert keys[0] == keys[1] and len({keys[0], keys[2], keys[3]}) == 3
