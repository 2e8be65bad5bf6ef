"""The padded copies' rank-2 fast path and the memcpy switch (loom_copy_use_memcpy): every view,
padding and mode gives the numpy answer with the copy specialisation on and off."""

from __future__ import annotations

import ctypes

import numpy as np
import pytest
from tests.runtime.runtime_helpers import ERR_STAGING_OVERFLOW, SIM, last_error

from loom.runtime import memcpy_copies, memref_descriptor

SEND, RECV = 0, 1

# (matrix shape, view rows, view cols, row offset, col offset, padded rows, padded cols, row step)
VIEWS = [
    ((64, 64), slice(0, 16), slice(16, 32), 16, 16, 1),   # whole 16x16 tile: the AVX row copy
    ((40, 24), slice(32, 40), slice(16, 24), 8, 8, 1),    # whole 8x8 tile
    ((40, 70), slice(32, 40), slice(64, 70), 8, 8, 1),    # edge tile: padded rows tails
    ((17, 5), slice(16, 17), slice(0, 5), 4, 8, 1),       # padded rows and cols
    ((9, 9), slice(0, 9), slice(0, 9), -1, -1, 1),        # no padding, rows back to back
    ((12, 20), slice(1, 12), slice(3, 19), 12, 16, 2),    # row step 2 (strided rows)
]


def _view(shape, rows, cols, step, dtype, rng):
    base = rng.integers(-50, 50, shape).astype(dtype)
    return base, base[rows.start:rows.stop:step, cols]


def _padded(view, pr, pc):
    pr = view.shape[0] if pr <= 0 else pr
    pc = view.shape[1] if pc <= 0 else pc
    out = np.zeros((pr, pc), view.dtype)
    out[: view.shape[0], : view.shape[1]] = view
    return out


def _init(lib):
    lib.loom_dma_use_backend(SIM)
    assert lib.dma_init(0, 0, 4096, 0, 4096) == 0


@pytest.mark.sanitize
@pytest.mark.parametrize("memcpy", [True, False], ids=["memcpy", "element"])
@pytest.mark.parametrize("dtype,t", [(np.int32, "i32"), (np.float32, "f32")])
@pytest.mark.parametrize("shape,rows,cols,pr,pc,step", VIEWS)
def test_pack_unpack_and_accumulate_match_numpy(lib, memcpy, dtype, t, shape, rows, cols, pr, pc, step):
    rng = np.random.default_rng(len(shape) + pr)
    _init(lib)
    lib.loom_operand_tally_reset()
    with memcpy_copies(lib, memcpy):
        base, view = _view(shape, rows, cols, step, dtype, rng)
        d = memref_descriptor(view)
        # pack at a non-zero offset: the block lands there, zero-filled outside the view
        lib.write_literal(7, 0)
        end = getattr(lib, f"copy_to_inbuffer_padded_{t}")(2, ctypes.byref(d), 1, pr, pc, -1, -1)
        want = _padded(view, pr, pc)
        assert end == 1 + want.size, last_error(lib)
        staged = np.ctypeslib.as_array(lib.dma_in_buffer(), (1 + want.size,)).copy()
        assert staged[0] == 7
        np.testing.assert_array_equal(staged[1:].view(dtype).reshape(want.shape), want)
        # unpack / accumulate from the output staging buffer: only the view's corner comes back
        block = rng.integers(-50, 50, want.shape).astype(dtype)
        np.ctypeslib.as_array(lib.dma_out_buffer(), (block.size,))[:] = block.reshape(-1).view(np.uint32)
        before = base.copy()
        getattr(lib, f"copy_from_outbuffer_padded_acc_{t}")(2, ctypes.byref(d), 0, pr, pc, -1, -1)
        expect = before.copy()
        expect[rows.start:rows.stop:step, cols] += block[: view.shape[0], : view.shape[1]]
        np.testing.assert_array_equal(base, expect)
        getattr(lib, f"copy_from_outbuffer_padded_{t}")(2, ctypes.byref(d), 0, pr, pc, -1, -1)
        expect[rows.start:rows.stop:step, cols] = block[: view.shape[0], : view.shape[1]]
        np.testing.assert_array_equal(base, expect)
        # the tally counts whole blocks, once per call: one send, two receives
        assert lib.loom_operand_tally(d.aligned, SEND) >= want.size
        assert lib.loom_operand_tally(d.aligned, RECV) >= 2 * want.size
        assert lib.loom_operand_tally(d.aligned, SEND) == want.size
        assert lib.loom_operand_tally(d.aligned, RECV) == 2 * want.size
        assert lib.loom_dma_error_code() == 0, last_error(lib)
    lib.dma_free()


def test_fast_path_reports_staging_overflow_like_the_general_path(lib):
    _init(lib)
    a = np.zeros((64, 64), np.int32)
    d = memref_descriptor(a[:16, :16])
    assert lib.copy_to_inbuffer_padded_i32(2, ctypes.byref(d), 4096 - 100, 16, 16, -1, -1) == -1
    assert lib.loom_dma_error_code() == ERR_STAGING_OVERFLOW
    assert "copy_to_inbuffer_padded_i32" in last_error(lib) and "4096" in last_error(lib)
    lib.loom_dma_clear_error()
    # a view larger than its padded block is an argument error naming the dim
    assert lib.copy_to_inbuffer_padded_i32(2, ctypes.byref(d), 0, 8, 16, -1, -1) == -1
    assert "larger than its padded size" in last_error(lib)
    lib.loom_dma_clear_error()
    lib.dma_free()


def test_switch_is_restored_and_env_overrides(lib, monkeypatch):
    assert lib.loom_copy_memcpy_enabled() == 1
    with memcpy_copies(lib, False):
        assert lib.loom_copy_memcpy_enabled() == 0
        monkeypatch.setenv("LOOM_COPY_MEMCPY", "on")
        _init(lib)  # dma_init reads the environment
        assert lib.loom_copy_memcpy_enabled() == 1
        lib.dma_free()
        monkeypatch.delenv("LOOM_COPY_MEMCPY")
        _init(lib)
        assert lib.loom_copy_memcpy_enabled() == 0  # back to the API setting
        lib.dma_free()
    assert lib.loom_copy_memcpy_enabled() == 1


# rank-3/4 views (a convolution's windows and filter slices): index expressions into the base array
ND_VIEWS = [
    ((1, 8, 10, 10), (slice(0, 1), slice(0, 8), slice(2, 5), slice(4, 7))),     # 3x3 window, 8 channels
    ((1, 4, 9, 9), (slice(0, 1), slice(0, 4), slice(3, 4), slice(5, 6))),       # fHW = 1: strided gather
    ((4, 8, 3, 3), (slice(2, 3), slice(0, 8), slice(0, 3), slice(0, 3))),       # a whole filter slice
    ((2, 6, 12, 20), (slice(0, 2), slice(1, 5), slice(0, 12, 3), slice(2, 18))),  # long rows, row step 3
    ((6, 12, 20), (slice(1, 5), slice(0, 12, 2), slice(0, 9))),                 # rank 3
]


@pytest.mark.sanitize
@pytest.mark.parametrize("memcpy", [True, False], ids=["memcpy", "element"])
@pytest.mark.parametrize("shape,index", ND_VIEWS)
def test_rank3_and_rank4_views_match_numpy(lib, memcpy, shape, index):
    rng = np.random.default_rng(sum(shape))
    _init(lib)
    with memcpy_copies(lib, memcpy):
        base = rng.integers(-50, 50, shape).astype(np.int32)
        view = base[index]
        d = memref_descriptor(view)
        end = lib.copy_to_inbuffer_padded_i32(view.ndim, ctypes.byref(d), 3, -1, -1, -1, -1)
        assert end == 3 + view.size, last_error(lib)
        staged = np.ctypeslib.as_array(lib.dma_in_buffer(), (end,)).copy().view(np.int32)
        np.testing.assert_array_equal(staged[3:], view.reshape(-1))
        block = rng.integers(-50, 50, view.size).astype(np.int32)
        np.ctypeslib.as_array(lib.dma_out_buffer(), (block.size,))[:] = block.view(np.uint32)
        expect = base.copy()
        expect[index] += block.reshape(view.shape)
        lib.copy_from_outbuffer_padded_acc_i32(view.ndim, ctypes.byref(d), 0, -1, -1, -1, -1)
        np.testing.assert_array_equal(base, expect)
        expect[index] = block.reshape(view.shape)
        lib.copy_from_outbuffer_padded_i32(view.ndim, ctypes.byref(d), 0, -1, -1, -1, -1)
        np.testing.assert_array_equal(base, expect)
    lib.dma_free()
