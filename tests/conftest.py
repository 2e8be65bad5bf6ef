"""Shared test set-up: markers, and the rule for tests that need upstream MLIR.

``mlir`` tests are skipped when mlir-opt/mlir-runner are missing, except under
CI (env ``CI`` set), where a missing tool is an error: CI must exercise them.
"""

from __future__ import annotations

import functools
import os

import pytest

MARKERS = {
    "mlir": "needs upstream mlir-opt / mlir-runner (mlir-22-tools)",
    "sanitize": "end-to-end test of generated C that is also run under ASan/UBSan",
    "slow": "longer tests",
    "bench": "runs the benchmark scripts in their --quick mode (tests/benchmarks)",
    "wheel": "builds the wheel and runs the installed CLI in a fresh venv (tests/packaging; needs LOOM_TEST_WHEEL=1)",
}


def pytest_configure(config):
    for name, help_text in MARKERS.items():
        config.addinivalue_line("markers", f"{name}: {help_text}")


@functools.cache
def _missing_mlir_reason() -> str | None:
    from loom.oracle.tools import available, bin_dir

    if available():
        return None
    return f"upstream MLIR tools not found in {bin_dir()} (install mlir-22-tools or set LOOM_MLIR_BIN)"


def pytest_runtest_setup(item):
    if item.get_closest_marker("mlir") is None:
        return
    reason = _missing_mlir_reason()
    if reason is None:
        return
    if os.environ.get("CI"):
        pytest.fail(f"CI is set, so this is an error: {reason}", pytrace=False)
    pytest.skip(reason)
