"""Check a kernel's compiled C against its numpy reference and upstream MLIR (mlir-runner).

Shared by ``loom run``, ``loom demo`` and ``loom build``: one definition of "checked".
"""

from __future__ import annotations

import math
import time

import numpy as np

from loom.core.compare import relative_difference

CHECK_HEADERS = ["kernel", "ops", "trace ms", "compile ms", "run ms", "vs numpy", "vs mlir-runner", "status"]


def check_kernel(kernel, example, call_args, *, use_mlir: bool) -> list:
    """Trace, compile, run; compare with numpy (built-ins) and mlir-runner. One table row."""
    from loom.oracle import mlir

    start = time.perf_counter()
    module = kernel.module
    trace_ms = (time.perf_counter() - start) * 1e3
    ops = sum(1 for _ in module.walk())

    ours = [_copy(a) for a in call_args]
    start = time.perf_counter()
    kernel.compile()
    compile_ms = (time.perf_counter() - start) * 1e3
    start = time.perf_counter()
    result = kernel(*ours)
    run_ms = (time.perf_counter() - start) * 1e3

    status = "ok"
    vs_numpy = "-"
    if example is not None:
        expected = example.reference([_copy(a) for a in call_args])
        if example.result is not None:
            expected = {**expected, "result": example.result(call_args)}
        errors = [_max_rel_error(result if k == "result" else ours[k], v) for k, v in expected.items()]
        vs_numpy = _error_text(max(errors, default=0.0))
        status = "ok" if max(errors, default=0.0) <= 1e-5 else "MISMATCH"

    vs_mlir = "skipped"
    if use_mlir and mlir.available():
        upstream = mlir.run(module, kernel.name, [_copy(a) for a in call_args])
        errors = [_max_rel_error(upstream.memrefs[i], a) for i, a in enumerate(ours) if isinstance(a, np.ndarray)]
        if result is not None:
            errors.append(_max_rel_error(upstream.results[0], result))
        vs_mlir = _error_text(max(errors, default=0.0))
        if max(errors, default=0.0) > 1e-5:
            status = "MISMATCH"
    return [kernel.name, ops, trace_ms, compile_ms, run_ms, vs_numpy, vs_mlir, status]


def _copy(value):
    return value.copy() if isinstance(value, np.ndarray) else value


def _max_rel_error(got, want) -> float:
    """max |got - want| / max(|want|, 1) over the finite values; infinite when the shapes, the NaN
    positions or the infinities differ (a NaN difference would pass any ``>`` tolerance test)."""
    if relative_difference(got, want) == math.inf:
        return math.inf
    got, want = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
    finite = np.isfinite(want)
    if not finite.any():
        return 0.0
    return float(np.max(np.abs(got[finite] - want[finite]) / np.maximum(np.abs(want[finite]), 1.0)))


def _error_text(error: float) -> str:
    return "exact" if error == 0 else f"{error:.1e}"
