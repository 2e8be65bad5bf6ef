"""Kernels for the researcher descriptions (loom accel run FILE.py:NAME)."""

from loom import F32, I32, Dim, MemRef, kernel, linalg

M, N, K, B = Dim("M"), Dim("N"), Dim("K"), Dim("B")
H, W, Ci, Co, FH, FW = Dim("H"), Dim("W"), Dim("Ci"), Dim("Co"), Dim("FH"), Dim("FW")


@kernel
def mm(A: MemRef[(M, K), I32], B_: MemRef[(K, N), I32], C: MemRef[(M, N), I32]):
    linalg.matmul(A, B_, C)


@kernel
def mm_f32(A: MemRef[(M, K), F32], B_: MemRef[(K, N), F32], C: MemRef[(M, N), F32]):
    linalg.matmul(A, B_, C)


@kernel
def mm_then_add(A: MemRef[(M, K), I32], B_: MemRef[(K, N), I32], C: MemRef[(M, N), I32],
                D: MemRef[(M, N), I32], E: MemRef[(M, N), I32]):
    linalg.matmul(A, B_, C)
    linalg.add(C, D, E)


@kernel
def ew_add(A: MemRef[(M, N), I32], B_: MemRef[(M, N), I32], C: MemRef[(M, N), I32]):
    linalg.add(A, B_, C)


@kernel
def bmm(A: MemRef[(B, M, K), I32], B_: MemRef[(B, K, N), I32], C: MemRef[(B, M, N), I32]):
    linalg.batch_matmul(A, B_, C)


@kernel
def conv_nhwc(I: MemRef[(2, 9, 8, 5), I32], F: MemRef[(3, 2, 5, 7), I32], O: MemRef[(2, 7, 7, 7), I32]):
    linalg.conv_2d_nhwc_hwcf(I, F, O)
