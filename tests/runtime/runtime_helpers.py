"""Helpers for the runtime tests: constants mirroring dma_runtime.h, numpy
references, and a tiny Python-side driver issuing the calls a generated driver would."""

from __future__ import annotations

import ctypes

import numpy as np

from loom.runtime import memref_descriptor

SIM, AXI = 0, 1
V1, V2, V3, V4, CONV = 1, 2, 3, 4, 5
I32, F32 = 0, 1

ERR_UNKNOWN_OPCODE = 1
ERR_TRANSFER_LENGTH = 2
ERR_STAGING_OVERFLOW = 3
ERR_ACCEL_OVERFLOW = 4
ERR_NOTHING_TO_RECV = 5
ERR_TILE_CONSTRAINT = 6
ERR_STATE = 7
ERR_DEVICE = 8
ERR_ARGUMENT = 9


def last_error(rt) -> str:
    return rt.loom_dma_last_error().decode()


def wrap_matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """int32 matmul with 32-bit wrap-around, computed independently in uint64."""
    prod = a.astype(np.int64).astype(np.uint64) @ b.astype(np.int64).astype(np.uint64)
    return prod.astype(np.uint32).view(np.int32)


def random_i32(rng, shape):
    return rng.integers(-(2**31), 2**31, size=shape, dtype=np.int64).astype(np.int32)


class Driver:
    """Python stand-in for generated host code: one DMA transaction per op
    (like the public AXI4MLIR code), or batched when ``batch`` is used."""

    def __init__(self, rt, dtype=I32):
        self.rt = rt
        self.suffix = "f32" if dtype == F32 else "i32"
        self.offset = 0

    def check(self):
        code = self.rt.loom_dma_error_code()
        assert code == 0, last_error(self.rt)

    def _desc(self, view):
        d = memref_descriptor(view)
        return view.ndim, ctypes.byref(d), d

    # -- staged writes (no transfer) --
    def put_literal(self, word):
        self.offset = self.rt.write_literal(word, self.offset)

    def put(self, view):
        rank, ptr, _keep = self._desc(view)
        self.offset = getattr(self.rt, f"copy_to_inbuffer_{self.suffix}")(rank, ptr, self.offset)

    def flush(self):
        if self.offset > 0:
            self.rt.dma_start_send(self.offset, 0)
            self.rt.dma_wait_send()
        self.offset = 0

    # -- one transaction per op --
    def send_literal(self, word):
        self.put_literal(word)
        self.flush()

    def send(self, view):
        self.put(view)
        self.flush()

    def recv(self, view, accumulate=False):
        words = view.size
        self.rt.dma_start_recv(words, 0)
        self.rt.dma_wait_recv()
        kind = "from_outbuffer_acc" if accumulate else "from_outbuffer"
        rank, ptr, _keep = self._desc(view)
        return getattr(self.rt, f"copy_{kind}_{self.suffix}")(rank, ptr, 0)


def reset_runtime(rt):
    rt.loom_dma_set_device_hook(None)  # before dma_free: a test's hook may be gone
    rt.dma_free()
    rt.loom_dma_clear_error()
    rt.loom_dma_set_tracing(0)
    rt.loom_trace_reset()
    rt.loom_dma_use_backend(SIM)
    rt.loom_dma_use_axi_platform(None)
    rt.loom_fake_axi_reset()
    # no model selected, as in a fresh process: a model an earlier test left (one whose create
    # fails, say) must not make this test's dma_init fail
    rt.loom_sim_use_model_vtable(None, None, None)
