"""Every protocol violation is detected by the models / runtime and reported
as an error code + message naming the opcode and word index; nothing hangs
or crashes, and later calls fail cleanly (sticky error)."""

import numpy as np
import pytest
from tests.runtime.runtime_helpers import (
    CONV, ERR_ACCEL_OVERFLOW, ERR_ARGUMENT, ERR_NOTHING_TO_RECV, ERR_STAGING_OVERFLOW, ERR_STATE,
    ERR_TILE_CONSTRAINT, ERR_TRANSFER_LENGTH, ERR_UNKNOWN_OPCODE, I32, V1, V2, V3, V4, Driver, last_error,
)

pytestmark = pytest.mark.sanitize

TILE = np.arange(16, dtype=np.int32).reshape(4, 4)


def start(lib, model, size=4, in_words=4096, out_words=4096):
    assert lib.loom_sim_use_model(model, size, I32) == 0
    assert lib.dma_init(0, 0, in_words, 0, out_words) == 0
    return Driver(lib)


def send_words(lib, words):
    d = Driver(lib)
    for w in words:
        d.put_literal(int(w) & 0xFFFFFFFF)
    d.flush()


def expect(lib, code, *fragments):
    assert lib.loom_dma_error_code() == code, last_error(lib)
    msg = last_error(lib)
    for frag in fragments:
        assert frag in msg, msg
    return msg


@pytest.mark.parametrize("model,word", [(V2, 8), (V2, 0), (V3, 16), (V4, 0x40), (CONV, 128)])
def test_unknown_opcode(lib, model, word):
    start(lib, model)
    send_words(lib, [word])
    expect(lib, ERR_UNKNOWN_OPCODE, f"opcode {word}", "send #1, word 0")


def test_extra_words_after_an_instruction_are_parsed_as_a_bad_opcode(lib):
    start(lib, V2)
    send_words(lib, [1, *range(100, 116), 99])  # 16 words of A then one too many
    expect(lib, ERR_UNKNOWN_OPCODE, "opcode 99", "word 17")


def test_short_transfer_inside_an_operand_block(lib):
    start(lib, V3)
    send_words(lib, [1, *range(8)])  # A needs 16 words
    expect(lib, ERR_TRANSFER_LENGTH, "opcode 1", "ended after 8 of the 16 words of A")


def test_v1_extra_words_start_a_tile_that_never_completes(lib):
    start(lib, V1)
    send_words(lib, [*range(32), 1, 2, 3])
    expect(lib, ERR_TRANSFER_LENGTH, "word 32", "3 of the 16 words of A")


def test_receive_before_the_instruction_is_complete(lib):
    d = start(lib, V3)
    send_words(lib, [3])
    d.send(TILE)  # A arrives, B never does
    lib.dma_start_recv(16, 0)
    expect(lib, ERR_TRANSFER_LENGTH, "opcode 3", "still expects 16 words of B", "before a receive")


def test_free_with_a_half_read_instruction(lib):
    start(lib, V4)
    send_words(lib, [1])  # opcode without its extension word
    assert lib.dma_free() == ERR_TRANSFER_LENGTH
    expect(lib, ERR_TRANSFER_LENGTH, "extension word never arrived", "at dma_free")


def test_receive_length_mismatch(lib):
    start(lib, V2)
    send_words(lib, [7, *range(32)])
    lib.dma_start_recv(10, 0)
    expect(lib, ERR_TRANSFER_LENGTH, "receive of 10 words", "sends 16 words")


@pytest.mark.parametrize("model", [V1, V3, CONV])
def test_receive_with_nothing_to_send_back(lib, model):
    start(lib, model)
    lib.dma_start_recv(16, 0)
    expect(lib, ERR_NOTHING_TO_RECV, "nothing to send back")


def test_second_result_before_the_first_was_received(lib):
    start(lib, V2)
    send_words(lib, [7, *range(32)])
    send_words(lib, [4])  # compute-and-send again: the output stream is still full
    expect(lib, ERR_ACCEL_OVERFLOW, "opcode 4", "16 output words were not received")


def test_staging_overflow_on_send_and_literal(lib):
    start(lib, V3, in_words=64, out_words=64)
    assert lib.dma_start_send(60, 10) == ERR_STAGING_OVERFLOW
    expect(lib, ERR_STAGING_OVERFLOW, "[10, 70)", "input staging buffer of 64 words")
    lib.loom_dma_clear_error()
    assert lib.write_literal(1, 64) == -1
    expect(lib, ERR_STAGING_OVERFLOW, "write_literal")
    lib.loom_dma_clear_error()
    assert lib.dma_start_recv(65, 0) == ERR_STAGING_OVERFLOW


@pytest.mark.parametrize(
    "m,n,k,code,fragment",
    [
        (20, 16, 16, ERR_TILE_CONSTRAINT, "M=20"),
        (16, 0, 16, ERR_TILE_CONSTRAINT, "N=0"),
        (16, 16, 1024 - 16, ERR_ACCEL_OVERFLOW, "A 16128"),
        (128, 16, 64, ERR_ACCEL_OVERFLOW, "A 8192"),
        (80, 80, 16, ERR_ACCEL_OVERFLOW, "C 6400"),
    ],
)
def test_v4_extension_word_violations(lib, m, n, k, code, fragment):
    start(lib, V4)
    send_words(lib, [7, m | (n << 10) | (k << 20)])
    expect(lib, code, fragment, "opcode 7")


def test_v4_extension_word_high_bits(lib):
    start(lib, V4)
    send_words(lib, [1, 16 | (16 << 10) | (16 << 20) | (1 << 30)])
    expect(lib, ERR_TILE_CONSTRAINT, "bits 31..30", "word 1")


def test_v4_compute_with_a_different_tile_than_loaded(lib):
    start(lib, V4)
    ext_a = 16 | (16 << 10) | (32 << 20)
    send_words(lib, [3, ext_a, *range(16 * 32), *range(32 * 16)])
    send_words(lib, [4, 16 | (16 << 10) | (16 << 20)])
    expect(lib, ERR_STATE, "M=16 N=16 K=16", "A holds 16x32")


def test_compute_before_operands_loaded(lib):
    start(lib, V3)
    send_words(lib, [4])
    expect(lib, ERR_STATE, "compute before A was loaded")


def test_conv_protocol_errors(lib):
    start(lib, CONV)
    send_words(lib, [1])
    expect(lib, ERR_STATE, "reads filters before the channel count was set")
    lib.dma_init(0, 0, 0, 0, 0)
    send_words(lib, [16, 4096, 32, 3])
    expect(lib, ERR_ACCEL_OVERFLOW, "36864 words exceed")
    lib.dma_init(0, 0, 0, 0, 0)
    send_words(lib, [16, 0])
    expect(lib, ERR_TILE_CONSTRAINT, "channel count iC = 0", "word 1")
    lib.dma_init(0, 0, 0, 0, 0)
    send_words(lib, [16, 1, 32, 1, 1, 5, 64])
    expect(lib, ERR_STATE, "opcode 64", "save output without a compute")


def test_no_model_selected(lib):
    assert lib.loom_sim_use_model(0, 0, I32) == 0  # LOOM_MODEL_NONE
    assert lib.dma_init(0, 0, 0, 0, 0) == 0
    send_words(lib, [1])
    expect(lib, ERR_STATE, "no accelerator model selected")


@pytest.mark.parametrize("model,size,dtype,fragment", [(9, 4, 0, "unknown model id 9"), (V2, 5, 0, "size 5"), (V3, 4, 7, "dtype 7")])
def test_bad_model_selection(lib, model, size, dtype, fragment):
    assert lib.loom_sim_use_model(model, size, dtype) == ERR_ARGUMENT
    expect(lib, ERR_ARGUMENT, fragment)


def test_calls_after_an_error_fail_cleanly(lib):
    d = start(lib, V2)
    send_words(lib, [8])
    first = last_error(lib)
    assert lib.dma_start_send(1, 0) == ERR_UNKNOWN_OPCODE
    assert lib.dma_start_recv(16, 0) == ERR_UNKNOWN_OPCODE
    assert d.recv(TILE.copy()) == -1
    assert lib.dma_check_send() == -ERR_UNKNOWN_OPCODE
    assert last_error(lib) == first  # the root cause is kept
    lib.loom_dma_clear_error()
    assert lib.loom_dma_error_code() == 0 and last_error(lib) == ""


def test_send_before_init(lib):
    assert lib.dma_start_send(1, 0) == ERR_STATE
    expect(lib, ERR_STATE, "before dma_init")
