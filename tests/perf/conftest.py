"""Fixtures for the perf tests: the hand-written drivers (loaded with ctypes,
tracing reset around each test) and their standalone harness executable."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

# benchmarks/ holds the `manual` package; `benchmarks.manual` is shadowed by
# xDSL's own top-level `benchmarks` package, so import it as `manual`.
BENCHMARKS_DIR = Path(__file__).resolve().parents[2] / "benchmarks"
if str(BENCHMARKS_DIR) not in sys.path:
    sys.path.insert(0, str(BENCHMARKS_DIR))

import manual  # noqa: E402


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
