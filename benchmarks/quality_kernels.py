"""The benchmark loop nests written in loom's Python frontend (static shapes, as the hand-written C)."""

from loom import F32, MemRef, kernel

N = 256
H = W = 2048


@kernel
def matmul(A: MemRef[(N, N), F32], B: MemRef[(N, N), F32], C: MemRef[(N, N), F32]):
    for i in range(N):
        for j in range(N):
            acc = F32(0.0)
            for k in range(N):
                acc = acc + A[i, k] * B[k, j]
            C[i, j] = acc


@kernel
def blur(I: MemRef[(H, W), F32], O: MemRef[(H, W), F32]):
    for y in range(1, H - 1):
        for x in range(1, W - 1):
            s = I[y - 1, x - 1] + I[y - 1, x]
            s = s + I[y - 1, x + 1]
            s = s + I[y, x - 1]
            s = s + I[y, x]
            s = s + I[y, x + 1]
            s = s + I[y + 1, x - 1]
            s = s + I[y + 1, x]
            s = s + I[y + 1, x + 1]
            O[y, x] = s * 0.111111111
