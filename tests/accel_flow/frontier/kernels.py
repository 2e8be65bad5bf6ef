"""Kernels for the frontier descriptions (loom accel run FILE.py:NAME)."""

from loom import F32, I32, Dim, MemRef, kernel, linalg

M, N, K = Dim("M"), Dim("N"), Dim("K")


@kernel
def mm_relu(A: MemRef[(M, K), F32], B_: MemRef[(K, N), F32], C: MemRef[(M, N), F32], Y: MemRef[(M, N), F32]):
    """A layer: C += A.B on the MatMul engine, then Y = relu(C) on the activation engine."""
    linalg.matmul(A, B_, C)
    linalg.generic([C], [Y], ["(i, j) -> (i, j)", "(i, j) -> (i, j)"], ["parallel", "parallel"],
                   lambda c, y: max(c, 0.0))


@kernel
def mm(A: MemRef[(M, K), I32], B_: MemRef[(K, N), I32], C: MemRef[(M, N), I32]):
    linalg.matmul(A, B_, C)
