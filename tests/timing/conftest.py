"""Fixtures for the timing-model and double-buffering tests."""

import pytest

from loom.accel.timing import TimingConfig
from loom.runtime import runtime_library
from loom.runtime.timing import configure_timing, set_host_model
from tests.runtime.runtime_helpers import reset_runtime


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
