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


B, H, W, Ch, FH, FW = Dim("B"), Dim("H"), Dim("W"), Dim("Ch"), Dim("FH"), Dim("FW")
OH, OW = Dim("OH"), Dim("OW")


@kernel
def depthwise(I: MemRef[(B, H, W, Ch), F32], F: MemRef[(FH, FW, Ch), F32], O: MemRef[(B, OH, OW, Ch), F32]):
    linalg.depthwise_conv_2d_nhwc_hwc(I, F, O)


@kernel
def depthwise_static(I: MemRef[(2, 12, 11, 20), F32], F: MemRef[(3, 3, 20), F32], O: MemRef[(2, 10, 9, 20), F32]):
    linalg.depthwise_conv_2d_nhwc_hwc(I, F, O)
