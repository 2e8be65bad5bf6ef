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


# ------------------------------------------------------------ the function's arguments, not the op's
OS_DESC = {"accelerators": [{
    "name": "os", "kernel": "matmul", "data_type": "i32", "model": "generic",
    "dma": {"dma_address": "0x40400000", "input_address": "0x16000000", "input_size": 1024,
            "output_address": "0x16400000", "output_size": 1024},
    "dims": ["m", "n", "k"], "tile_sizes": {"m": 8, "n": 4, "k": 16},
    "opcode_map": "opcode_map<rst=[send_literal(160)], macc=[send_literal(161), send(0), send(1)], "
                  "drain=[send_literal(162), recv(2)]>",
    "opcode_semantics": {"rst": "clear 2", "macc": "load 0, load 1, compute", "drain": "store 2, clear 2"},
    "opcode_flows": {"Cs": "((macc) drain)"}, "init_opcodes": "(rst)"}]}

USER_KERNELS = '''
from loom import kernel, linalg, MemRef, I32, Dim
M, N, K = Dim("M"), Dim("N"), Dim("K")

@kernel
def swapped(C: MemRef[(M, N), I32], A: MemRef[(M, K), I32], B: MemRef[(K, N), I32]):
    linalg.matmul(A, B, C)

@kernel
def two(A: MemRef[(M, K), I32], B: MemRef[(K, N), I32], C: MemRef[(M, N), I32], E: MemRef[(M, N), I32]):
    linalg.matmul(A, B, C)
    linalg.matmul(A, B, E)
'''


@pytest.fixture
def user_kernels(tmp_path):
    (tmp_path / "os.json").write_text(json.dumps(OS_DESC))
    (tmp_path / "userk.py").write_text(USER_KERNELS)
    from loom.examples.targets import resolve_kernel
    return str(tmp_path / "os.json"), {n: resolve_kernel(f"{tmp_path / 'userk.py'}:{n}")[0] for n in ("swapped", "two")}


def _mm_arrays(m, n, k, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.integers(-9, 9, (m, k)).astype(np.int32), rng.integers(-9, 9, (k, n)).astype(np.int32),
            rng.integers(-50, 50, (m, n)).astype(np.int32))


def test_arguments_in_another_order_than_the_operands(user_kernels):
    path, kernels = user_kernels
    drv = compile_driver(kernels["swapped"], path)
    A, B, C0 = _mm_arrays(9, 5, 17)
    C = C0.copy()
    stats = drv(C, A, B)  # the function's order: C, A, B (non-square, so positions would disagree)
    assert np.array_equal(C, C0 + A @ B)
    assert stats.transfers == drv.expected_transfers([C, A, B])
    assert stats.transfers.operand_words_received == {"C": 2 * 2 * 8 * 4}  # padded 16 x 8 in 8 x 4 tiles
    with pytest.raises(LoomError, match=r"operand B \(argument 2 B\) dim 0 has size 9 .* operand A"):
        drv(C, A, np.zeros((9, 5), np.int32))


@pytest.mark.parametrize("inline_copies", [True, False])
def test_two_offloaded_ops_take_all_the_function_arguments(user_kernels, inline_copies):
    path, kernels = user_kernels
    drv = compile_driver(kernels["two"], path, inline_copies=inline_copies)
    assert len(drv.summaries) == 2 and drv.arg_names == ("A", "B", "C", "E")
    A, B, C0 = _mm_arrays(9, 5, 17, seed=3)
    C, E = C0.copy(), np.zeros_like(C0)
    stats = drv(A, B, C, E)  # a fresh DMA session per op: the second stages into its own buffers
    assert np.array_equal(C, C0 + A @ B) and np.array_equal(E, A @ B)
    one = drv.summaries[0].expected_transfers({"m": 9, "n": 5, "k": 17})
    assert stats.transfers == drv.expected_transfers([A, B, C, E]) == one + one
    assert stats.transfers.operand_words_sent == {"A": 2 * one.operand_words_sent["A"],
                                                  "B": 2 * one.operand_words_sent["B"]}
    with pytest.raises(LoomError, match=r"takes 4 arrays \(the arguments of @two: A, B, C, E\), got 3"):
        drv(A, B, C)


@pytest.mark.parametrize("name", ["swapped", "two"])
def test_cli_runs_kernels_whose_arguments_are_not_the_operands(user_kernels, capsys, name):
    from loom.cli import main

    path, _ = user_kernels
    kernel_file = path.replace("os.json", "userk.py")
    rc = main(["accel", "run", f"{kernel_file}:{name}", "--accel", path, "--dims", "m=9,n=5,k=17"])
    out = capsys.readouterr()
    assert rc == 0, out.out + out.err
    assert "Traceback" not in out.err and out.out.rstrip().endswith("ok")


# ------------------------------------------------------------ DMA staging buffers
FLEX_MODEL = '''
import numpy as np
class Flex:
    kernel = "matmul"
    def __init__(self, acc):
        self.C = None; self.macs = 0
    def consume(self, w):
        v = w.view(np.int32); op = int(w[0])
        if op == 1:
            self.tm, self.tn, self.tk = int(w[1]), int(w[2]), int(w[3])
            if self.C is None or self.C.shape != (self.tm, self.tn):
                self.C = np.zeros((self.tm, self.tn), np.int32)
            return None
        if op == 2:
            na = self.tm * self.tk
            self.C += v[1:1 + na].reshape(self.tm, self.tk) @ v[1 + na:].reshape(self.tk, self.tn)
            return None
        if op == 3:
            out = self.C.reshape(-1).copy(); self.C[:] = 0; return out
        raise ValueError(op)
'''


def flex_description(tmp_path) -> str:
    """Flexible tiles up to 32 with a 1 KiB input buffer: the defaults fit, larger tiles may not."""
    (tmp_path / "flex.py").write_text(FLEX_MODEL)
    d = {"accelerators": [{
        "name": "flex4", "kernel": "matmul", "data_type": "i32", "model": {"python": "flex.py:Flex"},
        "dma": {"dma_address": "0x40400000", "input_address": "0x16000000", "input_size": 1024,
                "output_address": "0x16400000", "output_size": 4096},
        "dims": ["m", "n", "k"],
        "tile_sizes": {d: {"multiple_of": 4, "max": 32, "default": 8} for d in "mnk"},
        "opcode_map": "opcode_map<cfg=[send_literal(1), send_dim(0, 0), send_dim(1, 1), send_dim(0, 1)], "
                      "mac=[send_literal(2), send(0), send(1)], out=[send_literal(3), recv(2)]>",
        "opcode_flows": {"Cs": "((cfg mac) out)"}}]}
    path = tmp_path / "flex.json"
    path.write_text(json.dumps(d))
    return str(path)


@kernel
def mm_30x17x45(A: MemRef[(30, 45), I32], B: MemRef[(45, 17), I32], C: MemRef[(30, 17), I32]):
    linalg.matmul(A, B, C)


@pytest.mark.parametrize("double_buffer", [False, True])
def test_flow_auto_keeps_only_tiles_whose_opcodes_fit_the_dma_buffer(tmp_path, double_buffer):
    from loom.accel import load_description
    from loom.driver.autotune import candidates, summary_for

    path = flex_description(tmp_path)
    acc = load_description(path).accelerators[0]
    problem = {"m": 30, "n": 17, "k": 45}
    cands = candidates(acc, problem, (double_buffer,))
    capacity = acc.dma.input_words // (2 if double_buffer else 1)
    assert cands
    for cand in cands:
        words = {op: sent for op, sent, _ in summary_for(acc, cand).opcode_words(problem)}
        assert words["mac"] <= capacity, cand
    drv = compile_driver(mm_30x17x45, path, None, "auto", double_buffer=double_buffer)
    A, B, C0 = _mm_arrays(30, 17, 45, seed=5)
    C = C0.copy()
    drv(A, B, C)
    assert np.array_equal(C, C0 + A @ B)


def test_double_buffering_checks_half_the_input_buffer_at_compile_time(user_kernels):
    """macc sends 1 + 8*16 + 16*4 = 193 words: it fits the 256-word buffer but not a 128-word half."""
    path, _ = user_kernels
    compile_driver(mm, path)  # single-buffered: fits
    with pytest.raises(LoomError) as info:
        compile_driver(mm, path, double_buffer=True)
    err = info.value
    assert err.where == "accelerators[0].dma.input_size" and err.filename == path
    assert "opcode 'macc' sends 193 words" in err.message and "each half of the DMA input buffer holds 128 words" \
        in err.message


def test_full_dim_with_static_shapes_is_checked_at_compile_time(tmp_path):
    d = json.loads(json.dumps(OS_DESC))
    acc = d["accelerators"][0]
    acc.update(model=None, tile_sizes={"m": 8, "n": 4, "k": "full"}, opcode_flows={"Cs": "(macc drain)"})
    del acc["model"], acc["opcode_semantics"]
    path = tmp_path / "fullk.json"
    path.write_text(json.dumps(d))

    @kernel
    def mm_k100(A: MemRef[(9, 100), I32], B: MemRef[(100, 5), I32], C: MemRef[(9, 5), I32]):
        linalg.matmul(A, B, C)

    @kernel
    def mm_k20(A: MemRef[(9, 20), I32], B: MemRef[(20, 5), I32], C: MemRef[(9, 5), I32]):
        linalg.matmul(A, B, C)

    with pytest.raises(LoomError) as info:  # 1 + 8*100 + 100*4 = 1201 words > 256
        compile_driver(mm_k100, str(path), build=False)
    assert "opcode 'macc' sends 1201 words" in info.value.message and "k=100" in info.value.message
    compile_driver(mm_k20, str(path), build=False)  # 1 + 160 + 80 = 241 words fit
    compile_driver(mm, str(path), build=False)  # dynamic k: the runtime checks each call


# ------------------------------------------------------------ element-wise bodies
def elementwise_description(tmp_path, body: str, data_type: str, recv: str = "recv(2)") -> str:
    d = {"accelerators": [{
        "name": "ew", "data_type": data_type, "model": "generic",
        "kernel": {"indexing_maps": ["(i, j) -> (i, j)"] * 3, "iterator_types": ["parallel", "parallel"],
                   "body": body},
        "dma": {"dma_address": "0x40400000", "input_address": "0x16000000", "input_size": 4096,
                "output_address": "0x16400000", "output_size": 4096},
        "dims": ["i", "j"], "tile_sizes": {"i": 4, "j": 6},
        "opcode_map": f"opcode_map<go=[send_literal(1), send(0), send(1)], out=[send_literal(2), {recv}]>",
        "opcode_semantics": {"go": "load 0, load 1, compute", "out": "store 2"},
        "opcode_flows": {"One": "((go out))"}}]}
    path = tmp_path / f"ew_{body}.json"
    path.write_text(json.dumps(d))
    return str(path)


@pytest.mark.parametrize("data_type", ["i32", "f32"])
@pytest.mark.parametrize("body", ["add", "mul", "max", "min"])
def test_elementwise_bodies_match_and_run(tmp_path, body, data_type):
    from loom.examples.targets import resolve_kernel

    T = data_type.upper()
    (tmp_path / "ew.py").write_text(
        f"from loom import kernel, linalg, MemRef, {T}, Dim\nM, N = Dim('M'), Dim('N')\n\n@kernel\n"
        f"def ew(A: MemRef[(M, N), {T}], B: MemRef[(M, N), {T}], C: MemRef[(M, N), {T}]):\n"
        f"    linalg.{body}(A, B, C)\n")
    ew, _ = resolve_kernel(f"{tmp_path / 'ew.py'}:ew")
    drv = compile_driver(ew, elementwise_description(tmp_path, body, data_type))
    rng = np.random.default_rng(7)
    dt = np.int32 if data_type == "i32" else np.float32
    A, B = (rng.integers(-20, 20, (9, 13)).astype(dt) for _ in range(2))
    C = np.full((9, 13), 1000, dt)  # overwritten, not added to
    drv(A, B, C)
    want = {"add": np.add, "mul": np.multiply, "max": np.maximum, "min": np.minimum}[body](A, B)
    assert np.array_equal(C, want)


def test_elementwise_body_refuses_an_accumulating_recv(tmp_path):
    with pytest.raises(LoomError) as info:
        compile_driver(mm, elementwise_description(tmp_path, "add", "i32", "recv(2, accumulate)"))
    assert info.value.where == "accelerators[0].opcode_flows.One"
    assert "the kernel's body add overwrites C" in info.value.message


# ------------------------------------------------------------ strided convolution on the generic model
def conv_description(tmp_path, input_map: str | None = None) -> str:
    kernel_spec = "conv_2d_nchw_fchw" if input_map is None else {
        "indexing_maps": [input_map, "(b, oc, oh, ow, ic, fh, fw) -> (oc, ic, fh, fw)",
                          "(b, oc, oh, ow, ic, fh, fw) -> (b, oc, oh, ow)"],
        "iterator_types": ["parallel"] * 4 + ["reduction"] * 3, "body": "mul-add"}
    d = {"accelerators": [{
        "name": "conv_g", "kernel": kernel_spec, "model": "generic", "data_type": "i32",
        "dma": {"dma_address": "0x40400000", "input_address": "0x16000000", "input_size": 8192,
                "output_address": "0x16400000", "output_size": 8192},
        "dims": ["b", "oc", "oh", "ow", "ic", "fh", "fw"],
        "tile_sizes": {"b": 1, "oc": 2, "oh": 2, "ow": 3, "ic": 2, "fh": 3, "fw": 3},
        "opcode_map": "opcode_map<sWIc=[send_literal(51), send(1), send(0)], rO=[send_literal(68), recv(2)]>",
        "opcode_semantics": {"sWIc": "load 1, load 0, compute", "rO": "store 2, clear 2"},
        "opcode_flows": {"Os": "((((sWIc))) rO)"}}]}
    path = tmp_path / "conv_g.json"
    path.write_text(json.dumps(d))
    return str(path)


def test_strided_conv_on_the_generic_model_is_refused_at_compile_time(tmp_path):
    from tests.accel_flow.accel_flow_helpers import conv_module

    path = conv_description(tmp_path)
    with pytest.raises(LoomError) as info:
        compile_driver(conv_module(2), path)
    err = info.value
    assert err.where == "accelerators[0].model" and err.filename == path
    assert "operand I (subscript 2) as 2*oh + fh, the kernel as oh + fh" in err.message
    compile_driver(conv_module(1), path)  # stride 1 is the kernel as described


def test_strided_conv_written_into_the_signature_runs_on_the_generic_model(tmp_path):
    from tests.accel_flow.accel_flow_helpers import conv_module

    path = conv_description(tmp_path, "(b, oc, oh, ow, ic, fh, fw) -> (b, ic, 2 * oh + fh, 2 * ow + fw)")
    drv = compile_driver(conv_module(2), path)
    rng = np.random.default_rng(2)
    I = rng.integers(-5, 5, (1, 3, 11, 9)).astype(np.int32)
    W = rng.integers(-5, 5, (4, 3, 3, 3)).astype(np.int32)
    O0 = rng.integers(-5, 5, (1, 4, 5, 4)).astype(np.int32)
    O = O0.copy()
    drv(I, W, O)
    want = O0.astype(np.int64).copy()
    for fh in range(3):
        for fw in range(3):
            window = I[:, :, fh:fh + 2 * 5 - 1:2, fw:fw + 2 * 4 - 1:2]
            want += np.einsum("bchw,fc->bfhw", window, W[:, :, fh, fw])
    assert np.array_equal(O, want.astype(np.int32))


def test_an_op_that_matches_no_accelerator_is_named_with_its_source_line(user_kernels, tmp_path):
    from loom.examples.targets import resolve_kernel

    path, _ = user_kernels
    source = tmp_path / "mixed.py"
    source.write_text("from loom import kernel, linalg, MemRef, I32, Dim\nM, N, K = Dim('M'), Dim('N'), Dim('K')\n\n"
                      "@kernel\ndef mixed(A: MemRef[(M, K), I32], B: MemRef[(K, N), I32], C: MemRef[(M, N), I32],\n"
                      "          E: MemRef[(M, N), I32]):\n    linalg.matmul(A, B, C)\n    linalg.add(C, C, E)\n")
    mixed, _ = resolve_kernel(f"{source}:mixed")
    with pytest.raises(LoomError) as info:
        compile_driver(mixed, path)
    err = info.value
    assert (err.filename, err.line) == (str(source), 8)
    assert "body add" in err.message and "does not match accelerator os" in err.message
    assert "only ops that match the accelerator are offloaded" in err.message


def test_cli_compile_reports_the_transfers_of_swapped_static_arguments(tmp_path, capsys):
    from loom.cli import main

    (tmp_path / "os.json").write_text(json.dumps(OS_DESC))
    (tmp_path / "k.py").write_text(
        "from loom import kernel, linalg, MemRef, I32\n\n@kernel\n"
        "def sw(C: MemRef[(9, 5), I32], A: MemRef[(9, 17), I32], B: MemRef[(17, 5), I32]):\n"
        "    linalg.matmul(A, B, C)\n")
    rc = main(["accel", "compile", f"{tmp_path / 'k.py'}:sw", "--accel", str(tmp_path / "os.json"),
               "-o", str(tmp_path / "out")])
    out = capsys.readouterr().out
    assert rc == 0
    # 2 x 2 x 2 tiles of 8 x 4 x 16: A 8*16 and B 16*4 words per macc, C 8*4 per drain
    assert "bytes per operand: A=4096 B=2048 C=512" in out
