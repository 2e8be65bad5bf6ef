"""int ** int (math.ipowi) runs on upstream mlir-runner too: the oracle's lowering had no pattern for it
("failed to legalize operation 'math.ipowi'"). Same numbers as loom's C and as Python's wrapped powers."""

import numpy as np
import pytest

import tests.frontends.kernel.kernel_user_kernels as U
from loom.oracle import mlir

pytestmark = pytest.mark.mlir


def _wrap32(v: int) -> int:
    return (v + 2**31) % 2**32 - 2**31


def test_integer_power_agrees_with_c_and_python():
    # negative exponents only on bases +-1 and 2 (0 ** negative traps in upstream's generated function)
    x = np.array([0, 1, 2, 5, -3, 7, -1, 3, 2, 1], np.int32)
    e = np.array([0, 9, 10, 3, 3, 12, -3, 25, -1, -7], np.int32)
    want = np.array([_wrap32((int(b) ** int(p) if p >= 0 else {1: 1, -1: (-1) ** (-int(p))}.get(int(b), 0))
                             + (2 ** int(b) if b >= 0 else 0)) for b, p in zip(x, e)], np.int32)
    ours = np.zeros_like(x)
    U.int_powers(x, e, ours)
    np.testing.assert_array_equal(ours, want)
    ran = mlir.run(U.int_powers.module, "int_powers", [x, e, np.zeros_like(x)])
    np.testing.assert_array_equal(ran.memrefs[2], want)
