"""Python conveniences over the loaded runtime: the shipped models by id (``use_model``, for
hand-written drivers; descriptions choose models with ``"model"``, ``loom.runtime.models``),
errors as LoomError, and the tracing counters/records as plain Python."""

from __future__ import annotations

import ctypes
from contextlib import contextmanager
from typing import Iterator

from loom.errors import LoomError
from loom.runtime.build import TraceCounters
from loom.runtime.timing import timing_report  # noqa: F401  (re-exported)

DTYPES = {"i32": 0, "int32": 0, "f32": 1, "float32": 1}
SEND, RECV = 0, 1


def use_model(lib: ctypes.CDLL, name: str, size: int = 0, dtype: str = "i32") -> None:
    """Select the simulated accelerator: ``name`` in v1..v4 / matmul_vN / conv / conv2d."""
    model = lib.loom_model_id_from_name(name.encode())
    if model < 0:
        raise LoomError(f"unknown accelerator model {name!r}; expected v1, v2, v3, v4 or conv",
                        where="loom_sim_use_model")
    if dtype not in DTYPES:
        raise LoomError(f"unknown data type {dtype!r}; expected i32 or f32", where="loom_sim_use_model")
    lib.loom_sim_use_model(model, size, DTYPES[dtype])
    raise_on_error(lib)


def raise_on_error(lib: ctypes.CDLL) -> None:
    """Raise the runtime's pending error (protocol, overflow, device) as a LoomError."""
    code = lib.loom_dma_error_code()
    if code:
        message = lib.loom_dma_last_error().decode(errors="replace")
        lib.loom_dma_clear_error()
        raise LoomError(f"{message} (runtime error code {code})", where="DMA runtime")


def trace_counters(lib: ctypes.CDLL) -> dict[str, int]:
    counters = TraceCounters()
    lib.loom_trace_get_counters(ctypes.byref(counters))
    return {name: getattr(counters, name) for name, _ in TraceCounters._fields_}


def trace_records(lib: ctypes.CDLL) -> list[tuple[str, int, int]]:
    """(``"send"``/``"recv"``, length in words, first word) per transaction."""
    direction, length, first = ctypes.c_int(), ctypes.c_int(), ctypes.c_uint32()
    records = []
    for i in range(lib.loom_trace_record_count()):
        lib.loom_trace_record(i, ctypes.byref(direction), ctypes.byref(length), ctypes.byref(first))
        records.append(("send" if direction.value == SEND else "recv", length.value, first.value))
    return records


@contextmanager
def memcpy_copies(lib: ctypes.CDLL, enabled: bool) -> Iterator[None]:
    """Run the block with the runtime's memcpy copy specialisation on or off (paper Fig. 12).

    Off: the padded copies move every word one by one (no memcpy per row, no rank-2
    fast path). The environment variable ``LOOM_COPY_MEMCPY=off|on``, read at
    ``dma_init``, overrides this for standalone executables."""
    before = lib.loom_copy_memcpy_enabled()
    lib.loom_copy_use_memcpy(1 if enabled else 0)
    try:
        yield
    finally:
        lib.loom_copy_use_memcpy(before)


@contextmanager
def without_arithmetic(lib: ctypes.CDLL) -> Iterator[None]:
    """Run the block with the simulated accelerator moving words but not computing values
    (``loom_sim_set_arithmetic(0)``): for timing the host's share of a driver call alone.
    Models created inside the block (at each ``dma_init``) skip their multiply-accumulates
    and return meaningless values; transfers, words and the timing model's MAC counts are
    unchanged. The previous setting is restored on exit, even on error."""
    before = lib.loom_sim_set_arithmetic(0)
    try:
        yield
    finally:
        lib.loom_sim_set_arithmetic(before)
