"""Copy routines between strided memref views and the staging buffers,
checked against numpy slicing."""

import ctypes

import numpy as np
import pytest
from tests.runtime.runtime_helpers import ERR_ARGUMENT, ERR_STAGING_OVERFLOW, last_error, random_i32

from loom.errors import LoomError
from loom.runtime import memref_descriptor

pytestmark = pytest.mark.sanitize

rng = np.random.default_rng(7)

BASE = random_i32(rng, (5, 6, 7, 9))
SELECTIONS = {
    "rank1 contiguous": lambda x: x[1, 2, 3, :],
    "rank1 strided": lambda x: x[1, 2, 3, ::3],
    "rank1 negative": lambda x: x[1, 2, ::-2, 4],
    "rank2 contiguous": lambda x: x[0, 1],
    "rank2 row slice": lambda x: x[0, 1, 1:5, 2:8],
    "rank2 transposed": lambda x: x[2, 3].T,
    "rank2 strided": lambda x: x[::2, 1, ::3, 4],
    "rank3 mixed": lambda x: x[1:4, 2, 1:6:2, ::2],
    "rank3 permuted": lambda x: x[1].transpose(2, 0, 1)[:, 1:4, ::2],
    "rank4 whole": lambda x: x,
    "rank4 window": lambda x: x[1:3, :, 2:5, 3:6],
    "rank4 strided": lambda x: x[::2, ::-1, 1::3, ::4],
    "empty": lambda x: x[0, 0, 3:3, :],
}


def _words(lib, n):
    buf = lib.dma_in_buffer()
    return np.ctypeslib.as_array(buf, shape=(lib.dma_in_size(),))[:n].view(np.int32).copy()


@pytest.mark.parametrize("name", SELECTIONS)
def test_pack_equals_numpy_ravel(lib, name):
    view = SELECTIONS[name](BASE)
    assert lib.dma_init(0, 0, 4096, 0, 4096) == 0
    desc = memref_descriptor(view)
    end = lib.copy_to_inbuffer_i32(view.ndim, ctypes.byref(desc), 5)
    assert end == 5 + view.size, last_error(lib)
    packed = _words(lib, end)[5:]
    np.testing.assert_array_equal(packed, np.ascontiguousarray(view).ravel())


@pytest.mark.parametrize("name", SELECTIONS)
@pytest.mark.parametrize("accumulate", [False, True])
def test_unpack_writes_only_the_view(lib, name, accumulate):
    target, expected = BASE.copy(), BASE.copy()
    view, expected_view = SELECTIONS[name](target), SELECTIONS[name](expected)
    incoming = random_i32(rng, view.shape)
    if accumulate:  # 32-bit wrap-around, like the C side
        expected_view[...] = (expected_view.view(np.uint32) + incoming.view(np.uint32)).view(np.int32)
    else:
        expected_view[...] = incoming
    assert lib.dma_init(0, 0, 64, 0, 4096) == 0
    out = np.ctypeslib.as_array(lib.dma_out_buffer(), shape=(4096,))
    out[3 : 3 + view.size] = incoming.ravel().view(np.uint32)
    fn = lib.copy_from_outbuffer_acc_i32 if accumulate else lib.copy_from_outbuffer_i32
    desc = memref_descriptor(view)
    assert fn(view.ndim, ctypes.byref(desc), 3) == 3 + view.size, last_error(lib)
    np.testing.assert_array_equal(target, expected)


def test_f32_accumulate_adds_floats(lib):
    c = np.arange(12, dtype=np.float32).reshape(3, 4) * 0.5
    view = c[:, 1:3]
    before = view.copy()
    assert lib.dma_init(0, 0, 64, 0, 64) == 0
    tile = np.array([1.25, -2.0, 3.5, 0.25, 8.0, -0.5], dtype=np.float32)
    np.ctypeslib.as_array(lib.dma_out_buffer(), shape=(64,))[:6] = tile.view(np.uint32)
    desc = memref_descriptor(view)
    assert lib.copy_from_outbuffer_acc_f32(2, ctypes.byref(desc), 0) == 6
    np.testing.assert_array_equal(view, before + tile.reshape(3, 2))


def test_copy_past_staging_buffer_is_reported(lib):
    a = np.zeros((8, 8), dtype=np.int32)
    assert lib.dma_init(0, 0, 100, 0, 100) == 0
    desc = memref_descriptor(a)
    assert lib.copy_to_inbuffer_i32(2, ctypes.byref(desc), 36) == 100  # exactly fits
    assert lib.copy_to_inbuffer_i32(2, ctypes.byref(desc), 37) == -1
    assert lib.loom_dma_error_code() == ERR_STAGING_OVERFLOW
    assert "[37, 101)" in last_error(lib) and "100 words" in last_error(lib)
    # sticky: later calls are no-ops reporting failure
    assert lib.write_literal(1, 0) == -1


def test_receive_copy_past_output_buffer_is_reported(lib):
    a = np.zeros((4, 4), dtype=np.int32)
    assert lib.dma_init(0, 0, 64, 0, 20) == 0
    desc = memref_descriptor(a)
    assert lib.copy_from_outbuffer_i32(2, ctypes.byref(desc), 8) == -1
    assert lib.loom_dma_error_code() == ERR_STAGING_OVERFLOW
    assert "output staging buffer of 20 words" in last_error(lib)


def test_bad_rank_is_reported(lib):
    a = np.zeros((2, 2), dtype=np.int32)
    desc = memref_descriptor(a)
    assert lib.dma_init(0, 0, 64, 0, 64) == 0
    assert lib.copy_to_inbuffer_i32(5, ctypes.byref(desc), 0) == -1
    assert lib.loom_dma_error_code() == ERR_ARGUMENT
    assert "rank 5" in last_error(lib)


def test_copy_before_init_is_reported(lib):
    a = np.zeros(4, dtype=np.int32)
    desc = memref_descriptor(a)
    assert lib.copy_to_inbuffer_i32(1, ctypes.byref(desc), 0) == -1
    assert "before dma_init" in last_error(lib)


def test_descriptor_rejects_other_dtypes():
    with pytest.raises(LoomError, match="int32 or float32"):
        memref_descriptor(np.zeros(3, dtype=np.float64))
