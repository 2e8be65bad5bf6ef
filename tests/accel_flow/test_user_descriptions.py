"""Descriptions a user writes: what loom refuses (a LoomError naming the place) and what it runs
right (checked against numpy)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from loom import Dim, I32, MemRef, kernel, linalg
from loom.driver import compile_driver
from loom.errors import LoomError

M, N, K = Dim("M"), Dim("N"), Dim("K")


@kernel
def mm(A: MemRef[(M, K), I32], B: MemRef[(K, N), I32], C: MemRef[(M, N), I32]):
    linalg.matmul(A, B, C)


# an output-stationary matmul accelerator whose model starts C from what the host sends (op 1)
LOAD_C_MODEL = '''
import numpy as np
class LoadC:
    kernel = "matmul"
    def __init__(self, acc):
        self.t = {d: acc.tiles[d].size for d in ("m", "n", "k")}
        self.C = np.zeros((self.t["m"], self.t["n"]), np.int32)
        self.macs = 0
    def consume(self, w):
        v = w.view(np.int32); op = int(w[0]); tm, tn, tk = self.t["m"], self.t["n"], self.t["k"]
        if op == 1:
            self.C = v[1:].reshape(tm, tn).copy(); return None
        if op == 2:
            A = v[1:1 + tm * tk].reshape(tm, tk); B = v[1 + tm * tk:].reshape(tk, tn)
            self.C += A @ B; self.macs += tm * tn * tk; return None
        if op == 3:
            out = self.C.reshape(-1).copy(); self.C[:] = 0; return out
        raise ValueError(op)
'''


def load_c_description(tmp_path, opcode_map: str, flow: str) -> str:
    (tmp_path / "load_c.py").write_text(LOAD_C_MODEL)
    d = {"accelerators": [{
        "name": "osc", "kernel": "matmul", "data_type": "i32", "model": {"python": "load_c.py:LoadC"},
        "dma": {"dma_address": "0x40400000", "input_address": "0x16000000", "input_size": 4096,
                "output_address": "0x16400000", "output_size": 4096},
        "dims": ["m", "n", "k"], "tile_sizes": {"m": 4, "n": 3, "k": 5},
        "opcode_map": opcode_map, "opcode_flows": {"Cs": flow}}]}
    path = tmp_path / "osc.json"
    path.write_text(json.dumps(d))
    return str(path)


def test_replace_without_sending_c_is_refused_at_load(tmp_path):
    path = load_c_description(tmp_path, "opcode_map<mac=[send_literal(2), send(0), send(1)], "
                              "out=[send_literal(3), recv(2, replace)]>", "((mac) out)")
    with pytest.raises(LoomError) as info:
        compile_driver(mm, path, None, "Cs")
    err = info.value
    assert err.where == "accelerators[0].opcode_flows.Cs"
    assert "flow 'Cs', opcode 'out'" in err.message
    assert "replace discards C's initial values" in err.message and "send C first or use accumulate" in \
        err.message.replace(" (send(2))", "")


@pytest.mark.parametrize("mode", ["replace", "accumulate"])
def test_replace_after_sending_c_and_accumulate_keep_c(tmp_path, mode):
    """Replace is right when the accelerator starts from C's tile; accumulate when it starts from zero."""
    if mode == "replace":
        omap = ("opcode_map<ld=[send_literal(1), send(2)], mac=[send_literal(2), send(0), send(1)], "
                "out=[send_literal(3), recv(2, replace)]>")
        flow = "(ld (mac) out)"
    else:
        omap = "opcode_map<mac=[send_literal(2), send(0), send(1)], out=[send_literal(3), recv(2)]>"
        flow = "((mac) out)"
    drv = compile_driver(mm, load_c_description(tmp_path, omap, flow), None, "Cs")
    rng = np.random.default_rng(1)
    A = rng.integers(-9, 9, (10, 13)).astype(np.int32)
    B = rng.integers(-9, 9, (13, 7)).astype(np.int32)
    C0 = rng.integers(-50, 50, (10, 7)).astype(np.int32)
    C = C0.copy()
    drv(A, B, C)
    assert np.array_equal(C, C0 + A @ B)
