"""Fixture: the loaded C runtime, reset to a clean state around each test."""

import pytest
from tests.runtime.runtime_helpers import reset_runtime

from loom.runtime import runtime_library


@pytest.fixture
def lib():
    rt = runtime_library()
    reset_runtime(rt)
    yield rt
    reset_runtime(rt)
