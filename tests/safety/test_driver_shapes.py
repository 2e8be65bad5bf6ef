"""Defect 1 (drivers): every flow of every shipped accelerator refuses arrays whose shared dimensions
disagree with a LoomError before its C runs, and still runs (checked against numpy) when they agree."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from tests.accel_flow.accel_flow_helpers import EXAMPLES, conv_module, matmul_module

from loom.driver import compile_driver
from loom.errors import LoomError
from loom.accel import load_description as _load


def _matmul_or_conv(path) -> bool:
    """The MatMul and Conv2D families; the example accelerators with kernels of their own are checked in
    tests/models/test_example_accelerators.py."""
    return any(a.kernel.name == "matmul" or a.kernel.name.startswith("conv") for a in _load(str(path)).accelerators)


def shipped_flows():
    for path in sorted(EXAMPLES.glob("*.json")):
        system = _load(str(path))
        if not _matmul_or_conv(path):
            continue
        for acc in system.accelerators:
            for flow in acc.flows:
                yield pytest.param(str(path), acc.name, flow.name, acc.kernel.name, id=f"{acc.name}-{flow.name}")


FLOWS = list(shipped_flows())


@functools.cache
def driver(path, acc, flow, kernel_name):
    module = matmul_module() if kernel_name == "matmul" else conv_module(1)
    return compile_driver(module, path, acc, flow)


def test_every_shipped_description_is_covered():
    files = {p.values[0] for p in FLOWS}
    assert len(files) == len([p for p in EXAMPLES.glob("*.json") if _matmul_or_conv(p)])
    assert len(FLOWS) >= 30


def matmul_cases(rng):
    def arrays(m, k1, k2, n1, n2, m2):
        return [rng.integers(-4, 4, size=s).astype(np.int32) for s in ((m, k1), (k2, n1), (m2, n2))]
    return {
        "K": (arrays(16, 16, 8, 16, 16, 16), r"operand B dim 0 has size 8 but operand A dim 1 has size 16"),
        "M": (arrays(16, 16, 16, 16, 16, 32), r"operand C dim 0 has size 32 but operand A dim 0 has size 16"),
        "N": (arrays(16, 16, 16, 16, 24, 16), r"operand C dim 1 has size 24 but operand B dim 1 has size 16"),
    }


def conv_cases(rng):
    def arrays(i, w, o):
        return [rng.integers(-4, 4, size=s).astype(np.int32) for s in (i, w, o)]
    return {
        # output 8x8 with a 3x3 filter reads input rows 0..9: a 9-row input is too small
        "window": (arrays((1, 4, 9, 10), (8, 4, 3, 3), (1, 8, 8, 8)), r"operand I dim 2 has size 9 but is indexed"),
        "channels": (arrays((1, 4, 10, 10), (8, 2, 3, 3), (1, 8, 8, 8)), r"operand W dim 1 has size 2 but operand "
                     r"I dim 1 has size 4"),
        "filters": (arrays((1, 4, 10, 10), (8, 4, 3, 3), (1, 6, 8, 8)), r"operand O dim 1 has size 6 but operand "
                    r"W dim 0 has size 8"),
    }


@pytest.mark.sanitize
@pytest.mark.parametrize("path,acc,flow,kernel_name", FLOWS)
def test_mismatched_shapes_are_refused_before_c_runs(path, acc, flow, kernel_name):
    drv = driver(path, acc, flow, kernel_name)
    rng = np.random.default_rng(0)
    cases = matmul_cases(rng) if kernel_name == "matmul" else conv_cases(rng)
    for name, (arrays, message) in cases.items():
        before = [a.copy() for a in arrays]
        drv.last_run = None
        with pytest.raises(LoomError, match=message):
            drv(*arrays)
        assert drv.last_run is None, name  # refused before the driver ran
        for a, b in zip(arrays, before):
            np.testing.assert_array_equal(a, b)


@pytest.mark.sanitize
@pytest.mark.parametrize("path,acc,flow,kernel_name", [p for p in FLOWS if p.values[1] in ("v3_8", "conv_os")])
def test_agreeing_shapes_still_run(path, acc, flow, kernel_name):
    drv = driver(path, acc, flow, kernel_name)
    rng = np.random.default_rng(1)
    if kernel_name == "matmul":
        A, B, C = (rng.integers(-4, 4, size=s).astype(np.int32) for s in ((16, 24), (24, 8), (16, 8)))
        want = C.astype(np.int64) + A.astype(np.int64) @ B.astype(np.int64)
        drv(A, B, C)
        np.testing.assert_array_equal(C, want)
    else:
        I, W, O = (rng.integers(-4, 4, size=s).astype(np.int32) for s in ((1, 4, 10, 10), (8, 4, 3, 3), (1, 8, 8, 8)))
        want = O.astype(np.int64)
        for y in range(3):
            for x in range(3):
                want += np.einsum("chw,fc->fhw", I[0, :, y:y + 8, x:x + 8], W[:, :, y, x])[None]
        drv(I, W, O)
        np.testing.assert_array_equal(O, want)
