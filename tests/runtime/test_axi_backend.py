"""The Linux AXI DMA backend, exercised on a fake register file (no /dev/mem):
the register sequence against Xilinx PG021's simple-mode programming order,
a full MatMul through the fake device, and error/timeout reporting."""

import ctypes
import platform

import numpy as np
import pytest
from tests.runtime.runtime_helpers import AXI, ERR_DEVICE, ERR_UNKNOWN_OPCODE, I32, V3, Driver, last_error, random_i32, wrap_matmul

pytestmark = pytest.mark.sanitize

DMA, IN, OUT = 0x40400000, 0x16000000, 0x16400000
MM2S_CR, MM2S_SR, MM2S_SA, MM2S_LEN = 0x00, 0x04, 0x18, 0x28
S2MM_CR, S2MM_SR, S2MM_DA, S2MM_LEN = 0x30, 0x34, 0x48, 0x58
RESET, RUN = 0x4, 0x1


def use_fake(lib):
    lib.loom_dma_use_backend(AXI)
    lib.loom_dma_use_axi_platform(lib.loom_fake_axi_platform())
    lib.loom_fake_axi_reset()


def register_log(lib):
    out = []
    w, off, val = ctypes.c_int(), ctypes.c_uint32(), ctypes.c_uint32()
    for i in range(lib.loom_fake_axi_log_count()):
        assert lib.loom_fake_axi_log_entry(i, ctypes.byref(w), ctypes.byref(off), ctypes.byref(val)) == 0
        out.append(("W" if w.value else "R", off.value, val.value))
    return out


def test_register_sequence_of_init_send_recv_free(lib):
    use_fake(lib)
    lib.loom_sim_use_model(V3, 4, I32)
    assert lib.dma_init(DMA, IN, 1024, OUT, 1024) == 0, last_error(lib)
    init = register_log(lib)
    # soft reset of each channel, polled until the self-clearing bit drops
    assert init == [("W", MM2S_CR, RESET), ("R", MM2S_CR, 0), ("W", S2MM_CR, RESET), ("R", S2MM_CR, 0)]

    lib.loom_fake_axi_reset()  # clears the log (and the model) but not the mapped memory
    a = np.arange(16, dtype=np.int32).reshape(4, 4)
    d = Driver(lib)
    d.put_literal(0)  # padding word so the transfer starts at offset 1
    d.put_literal(15)
    d.put(a)
    d.put(a)
    assert lib.dma_start_send(33, 1) == 0
    assert lib.dma_wait_send() == 0
    assert lib.dma_start_recv(16, 4) == 0
    assert lib.dma_wait_recv() == 0, last_error(lib)
    assert lib.dma_free() == 0
    log = register_log(lib)
    halted, idle = 0x1, 0x2
    assert log == [
        ("R", MM2S_SR, halted),          # engine not busy, no error bits
        ("W", MM2S_CR, RUN),
        ("W", MM2S_SA, IN + 4),          # byte address of word offset 1
        ("W", MM2S_LEN, 33 * 4),         # the length write starts the transfer
        ("R", MM2S_SR, idle),            # wait: poll until idle
        ("R", S2MM_SR, halted),
        ("W", S2MM_CR, RUN),
        ("W", S2MM_DA, OUT + 16),
        ("W", S2MM_LEN, 16 * 4),
        ("R", S2MM_SR, idle),
        ("W", MM2S_CR, 0),               # free halts both channels
        ("W", S2MM_CR, 0),
    ]


def test_matmul_through_the_fake_device_matches_numpy(lib):
    use_fake(lib)
    lib.loom_sim_use_model(V3, 8, I32)
    assert lib.dma_init(DMA, IN, 4096, OUT, 4096) == 0
    rng = np.random.default_rng(0)
    a, b = random_i32(rng, (16, 24)), random_i32(rng, (24, 16))
    c = np.zeros((16, 16), dtype=np.int32)
    d = Driver(lib)
    for m in range(0, 16, 8):
        for n in range(0, 16, 8):
            for k in range(0, 24, 8):
                d.put_literal(7)
                d.put(a[m : m + 8, k : k + 8])
                d.put(b[k : k + 8, n : n + 8])
                d.flush()
            d.send_literal(8)
            d.recv(c[m : m + 8, n : n + 8])
    d.check()
    np.testing.assert_array_equal(c, wrap_matmul(a, b))
    assert lib.dma_check_send() == 1 and lib.dma_check_recv() == 1


def test_device_error_bits_are_reported_with_the_model_message(lib):
    use_fake(lib)
    lib.loom_sim_use_model(V3, 4, I32)
    lib.dma_init(DMA, IN, 64, OUT, 64)
    lib.write_literal(99, 0)
    lib.dma_start_send(1, 0)
    assert lib.dma_wait_send() == ERR_UNKNOWN_OPCODE
    assert "opcode 99" in last_error(lib)
    lib.loom_dma_clear_error()
    assert lib.dma_check_send() == -ERR_DEVICE  # DMAIntErr latched in MM2S_SR
    assert "DMAIntErr" in last_error(lib)


# -- a register file written in Python: an engine that never finishes --------------
READ = ctypes.CFUNCTYPE(ctypes.c_uint32, ctypes.c_void_p, ctypes.c_uint32)
WRITE = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_uint32, ctypes.c_uint32)
OPEN = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_uint64)
CLOSE = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
MAP = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_uint64, ctypes.c_size_t)
UNMAP = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t)


class Platform(ctypes.Structure):
    _fields_ = [("ctx", ctypes.c_void_p), ("open", OPEN), ("close", CLOSE), ("reg_read", READ),
                ("reg_write", WRITE), ("map", MAP), ("unmap", UNMAP)]


def stuck_platform(reset_clears):
    regs, buffers = {}, []

    def read(_ctx, off):
        if off in (MM2S_CR, S2MM_CR) and not reset_clears:
            return regs.get(off, 0)
        return {MM2S_SR: 0, S2MM_SR: 0}.get(off, 0)  # running, never idle

    def write(_ctx, off, value):
        regs[off] = value

    def map_(_ctx, _phys, size):
        buf = ctypes.create_string_buffer(size)
        buffers.append(buf)
        return ctypes.addressof(buf)

    callbacks = (OPEN(lambda _c, _a: 0), CLOSE(lambda _c: None), READ(read), WRITE(write), MAP(map_),
                 UNMAP(lambda _c, _p, _s: None))
    p = Platform(None, *callbacks)
    p._keep = (callbacks, buffers)
    return p


@pytest.mark.parametrize("reset_clears,fragment", [(False, "reset did not complete"), (True, "timeout")])
def test_a_stuck_engine_times_out_instead_of_hanging(lib, reset_clears, fragment):
    p = stuck_platform(reset_clears)
    lib.loom_dma_use_backend(AXI)
    lib.loom_dma_use_axi_platform(ctypes.addressof(p))
    lib.loom_axi_set_poll_limit(1000)
    try:
        rc = lib.dma_init(DMA, IN, 64, OUT, 64)
        if reset_clears:
            assert rc == 0
            lib.write_literal(1, 0)
            # status reads 0: not idle and not halted, so even the start sees a busy engine
            lib.dma_start_send(1, 0)
            assert lib.loom_dma_error_code() != 0
            lib.loom_dma_clear_error()
            assert lib.dma_wait_send() == ERR_DEVICE
        else:
            assert rc == ERR_DEVICE
        assert fragment in last_error(lib)
    finally:
        lib.loom_axi_set_poll_limit(100000000)
        lib.dma_free()


@pytest.mark.skipif(platform.machine().startswith(("arm", "aarch")), reason="would touch /dev/mem")
def test_devmem_platform_refuses_on_a_workstation(lib, monkeypatch):
    monkeypatch.delenv("LOOM_ALLOW_DEVMEM", raising=False)
    lib.loom_dma_use_backend(AXI)
    assert lib.dma_init(DMA, IN, 64, OUT, 64) == ERR_DEVICE
    assert "only enabled on ARM" in last_error(lib)
    assert lib.dma_start_send(1, 0) != 0  # no backend: clean failure
