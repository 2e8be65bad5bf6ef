"""``loom_dma_set_device_hook``: the runtime tells the host which DMA engine each session opens (at
``dma_init``, before the backend creates its model) and when it closed (at the end of ``dma_free``), so a
driver over several accelerators runs each session on the model of the device at that address."""

import ctypes

import numpy as np
import pytest
from tests.runtime.runtime_helpers import I32, V3, last_error, random_i32
from tests.runtime.test_tracing import cs_flow

from loom.driver.devices import DEVICE_CLOSED, DEVICE_OPEN, HOOK_EVENT, DeviceHook

pytestmark = pytest.mark.sanitize

SMALL, LARGE = 0x40400000, 0x40410000  # a 4x4x4 and a 16x16x16 MatMul v3, on their own engines


def install(lib, events, on_open=None):
    def event(_ctx, address, kind):
        events.append((address, kind))
        if kind == DEVICE_OPEN and on_open:
            on_open(address)
    hook = DeviceHook(None, HOOK_EVENT(event))
    lib.loom_dma_set_device_hook(ctypes.addressof(hook))
    return hook  # keep the callback alive


def test_each_session_reports_its_address_when_opened_and_closed(lib):
    events = []
    keep = install(lib, events)
    lib.loom_sim_use_model(V3, 4, I32)
    for address in (SMALL, LARGE, SMALL):
        assert lib.dma_init(address, 0x16000000, 1024, 0x16400000, 1024) == 0
        assert events[-1] == (address, DEVICE_OPEN)
        assert lib.dma_free() == 0
    assert events == [(SMALL, DEVICE_OPEN), (SMALL, DEVICE_CLOSED), (LARGE, DEVICE_OPEN), (LARGE, DEVICE_CLOSED),
                      (SMALL, DEVICE_OPEN), (SMALL, DEVICE_CLOSED)]
    lib.loom_dma_set_device_hook(None)  # removed: sessions call nothing
    assert lib.dma_init(SMALL, 0x16000000, 1024, 0x16400000, 1024) == 0 and lib.dma_free() == 0
    assert len(events) == 6
    assert lib.dma_free() == 0 and len(events) == 6  # no session open: nothing closed
    del keep


def test_the_model_chosen_when_a_session_opens_is_the_one_it_drives(lib):
    sizes = {SMALL: 4, LARGE: 16}
    keep = install(lib, [], lambda address: lib.loom_sim_use_model(V3, sizes[address], I32))
    rng = np.random.default_rng(5)
    for address, size in ((SMALL, 4), (LARGE, 16), (SMALL, 4)):
        a, b = random_i32(rng, (16, 16)), random_i32(rng, (16, 16))
        assert lib.dma_init(address, 0x16000000, 4096, 0x16400000, 4096) == 0
        c = cs_flow(lib, a, b, S=size)  # 16x16 tiles fail on the 4x4 model, and the reverse
        assert lib.dma_free() == 0, last_error(lib)
        assert np.array_equal(c, a @ b)
    lib.loom_dma_set_device_hook(None)
    del keep
