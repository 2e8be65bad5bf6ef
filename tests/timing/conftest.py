"""Fixtures for the timing-model and double-buffering tests."""

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "accel_flow"))
sys.path.insert(0, str(ROOT / "tests" / "runtime"))
# benchmarks/manual is imported as `manual` (xDSL ships a top-level `benchmarks` package)
sys.path.insert(0, str(ROOT / "benchmarks"))

from runtime_helpers import reset_runtime  # noqa: E402

from loom.accel.timing import TimingConfig  # noqa: E402
from loom.runtime.timing import configure_timing, set_host_model  # noqa: E402
from loom.runtime import runtime_library  # noqa: E402


def restore_defaults(rt):
    reset_runtime(rt)
    configure_timing(rt, TimingConfig())
    set_host_model(rt, deterministic=False)


@pytest.fixture
def lib():
    rt = runtime_library()
    restore_defaults(rt)
    yield rt
    restore_defaults(rt)
