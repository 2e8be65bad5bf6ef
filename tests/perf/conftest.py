"""Fixtures for the perf tests: the hand-written drivers (loaded with ctypes,
tracing reset around each test) and their standalone harness executable."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.perf.manual_drivers import manual


@pytest.fixture
def drivers():
    lib = manual.load_drivers()
    lib.loom_dma_clear_error()
    lib.loom_dma_set_tracing(1)
    lib.loom_trace_reset()
    yield lib
    lib.loom_dma_set_tracing(0)
    lib.loom_trace_reset()
    lib.loom_dma_clear_error()


@pytest.fixture(scope="session")
def harness() -> Path:
    return manual.build_harness()
