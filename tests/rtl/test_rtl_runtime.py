"""The RTL model behind the C runtime's simulator backend, called the way a driver calls it:
a half-read instruction is reported at dma_free and before a receive, with the model's message
and error code; the RTL's cycles are readable after the run."""

from __future__ import annotations

import numpy as np
import pytest

from loom.accel import load_description
from loom.errors import LoomError
from loom.runtime import runtime_library
from loom.runtime.host import raise_on_error
from loom.runtime.models import model_for
from tests.rtl.rtl_helpers import DESCRIPTION, model_so
from tests.runtime.runtime_helpers import ERR_TRANSFER_LENGTH, last_error, reset_runtime

ACCELERATOR = load_description(DESCRIPTION).accelerator("rtl_4")


def use_rtl(lib) -> None:
    """A fresh Verilated design (T = 4) as the simulator's model, resolved from the description's
    "model" as drivers resolve it (loom.runtime.models.model_for)."""
    model_so(4)  # skip / fail here when Verilator is missing
    model_for(ACCELERATOR).select(lib)


@pytest.fixture
def lib():
    rt = runtime_library()
    reset_runtime(rt)
    yield rt
    reset_runtime(rt)


def send(lib, words):
    buf = lib.dma_in_buffer()
    for i, w in enumerate(words):
        buf[i] = int(w) & 0xFFFFFFFF
    assert lib.dma_start_send(len(words), 0) == 0, last_error(lib)
    return lib.dma_wait_send()


def test_a_half_read_instruction_is_an_error_at_dma_free(lib):
    use_rtl(lib)
    assert lib.dma_init(0, 0, 1024, 0, 1024) == 0
    assert send(lib, [1, *range(8)]) == ERR_TRANSFER_LENGTH  # tlast after 8 of A's 16 words
    assert "rtl_4 (RTL): tlast after 8 words of an operand block (send #1, word 8)" in last_error(lib)
    lib.loom_dma_clear_error()
    use_rtl(lib)  # a fresh design
    assert send(lib, [3, *range(16)]) == 0  # B never comes
    assert lib.dma_free() == ERR_TRANSFER_LENGTH
    assert "rtl_4 (RTL): opcode 3 is half-read" in last_error(lib) and "at dma_free" in last_error(lib)


def test_a_receive_before_the_instruction_completes_is_an_error(lib):
    use_rtl(lib)
    assert lib.dma_init(0, 0, 1024, 0, 1024) == 0
    assert send(lib, [15, *range(16)]) == 0
    assert lib.dma_start_recv(16, 0) == ERR_TRANSFER_LENGTH
    with pytest.raises(LoomError, match=r"opcode 15 is half-read.*before a receive"):
        raise_on_error(lib)


def test_cycles_of_a_run_are_kept_after_dma_free(lib):
    use_rtl(lib)
    assert lib.dma_init(0, 0, 1024, 0, 1024) == 0
    a = np.arange(16)
    assert send(lib, [15, *a, *a]) == 0
    assert lib.dma_start_recv(16, 0) == 0 and lib.dma_wait_recv() == 0
    out = np.ctypeslib.as_array(lib.dma_out_buffer(), shape=(16,)).view(np.int32).reshape(4, 4)
    np.testing.assert_array_equal(out, a.reshape(4, 4) @ a.reshape(4, 4))
    assert lib.dma_free() == 0
    assert lib.loom_sim_model_cycles() == 1 + 32 + 4 + 16


def test_messages_name_the_accelerator_once(lib):
    use_rtl(lib)
    assert lib.dma_init(0, 0, 1024, 0, 1024) == 0
    assert send(lib, [0]) != 0
    message = last_error(lib)
    assert message.startswith("rtl_4 (RTL): unknown opcode 0 (send #1, word 0)"), message
    assert message.count("rtl_4") == 1, message
