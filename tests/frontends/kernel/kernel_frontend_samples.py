"""Sample kernels shared by the kernel-frontend tests (IR structure, upstream verification, execution)."""

import math

import loom
from loom.frontends.kernel import F32, F64, I32, Dim, Index, MemRef, alloc, alloca, parallel

lm = loom.frontends.kernel.math
K = Dim("K")
SCALE = 2


@loom.kernel
def matmul(A: MemRef[("M", K), F32], B: MemRef[(K, "N"), F32], C: MemRef[("M", "N"), F32]):
    M, N = C.shape
    for i in range(M):
        for j in range(N):
            acc = C[i, j]
            for k in range(K):
                acc = acc + A[i, k] * B[k, j]  # MATMUL-ACC
            C[i, j] = acc


@loom.kernel(loops="affine")
def matmul_affine(A: MemRef[(4, 8), F32], B: MemRef[(8, 3), F32], C: MemRef[(4, 3), F32]):
    for i in range(4):
        for j in range(3):
            for k in range(8):
                C[i, j] += A[i, k] * B[k, j]


@loom.kernel(loops="affine")
def triangle_affine(A: MemRef[("N", "N"), F64]):
    for i in range(A.shape[0]):
        for j in range(i + 1, A.shape[1]):
            A[i, j] = 0.0


@loom.kernel
def conv2d_nchw(I: MemRef[(1, 2, 6, 7), F32], W: MemRef[(3, 2, 3, 3), F32], O: MemRef[(1, 3, 4, 5), F32]):
    for n in range(1):
        for f in range(3):
            for y in range(4):
                for x in range(5):
                    acc = 0.0
                    for c in range(2):
                        for ky in range(3):
                            for kx in range(3):
                                acc += I[n, c, y + ky, x + kx] * W[f, c, ky, kx]
                    O[n, f, y, x] = acc


@loom.kernel
def stencil(A: MemRef[("H", "W"), F32], B: MemRef[("H", "W"), F32]):
    H, W = A.shape
    for i in range(H):
        for j in range(W):
            if i == 0 or j == 0 or i == H - 1 or j == W - 1:
                B[i, j] = A[i, j]
            else:
                B[i, j] = 0.25 * (A[i - 1, j] + A[i + 1, j] + A[i, j - 1] + A[i, j + 1])


@loom.kernel
def softmax(X: MemRef[("R", "C"), F32], Y: MemRef[("R", "C"), F32]):
    R, C = X.shape
    for r in range(R):
        m = X[r, 0]
        for c in range(1, C):
            m = max(m, X[r, c])
        s = 0.0
        for c in range(C):
            e = math.exp(X[r, c] - m)
            Y[r, c] = e
            s += e
        for c in range(C):
            Y[r, c] = Y[r, c] / s


@loom.kernel
def prefix_sum(A: MemRef[("N",), I32], B: MemRef[("N",), I32]):
    acc = I32(0)
    for i in range(A.shape[0]):
        acc += A[i]
        B[i] = acc


@loom.kernel
def both_arms(x: F32, y: F32) -> F32:
    if x > y:  # BOTH-ARMS-IF
        big = x
        small = y
    else:
        big = y
        small = x
    return big - small


@loom.kernel
def clamp_elif(x: F64) -> F64:
    r = x
    if x < 0.0:
        r = 0.0
    elif x > 1.0:
        r = 1.0
    return r


@loom.kernel
def scale_add(x: F32, y: F32) -> F32:
    return x * SCALE + y


@loom.kernel
def uses_call(A: MemRef[("N",), F32], B: MemRef[("N",), F32]):
    for i in range(A.shape[0]):
        B[i] = scale_add(A[i], 1.0)  # CALL-SITE


@loom.kernel
def double_call(A: MemRef[("N",), F32], B: MemRef[("N",), F32]):
    uses_call(A, B)
    uses_call(B, B)


@loom.kernel
def par_scale(A: MemRef[("N", "M"), F64], B: MemRef[("N", "M"), F64]):
    for i, j in parallel((0, 0), (A.shape[0], A.shape[1])):
        B[i, j] = A[i, j] * 2.0 + F64(i) - F64(j)


@loom.kernel
def collatz(n: I32) -> I32:
    steps = I32(0)
    while n != 1:
        if n % 2 == 0:
            n = n // 2
        else:
            n = 3 * n + 1
        steps += 1
    return steps


@loom.kernel
def poly(x: F64, n: Index) -> (F64, Index):
    s = 0.0
    k = 0
    for i in range(n):
        s = s * x + 1.0
        k = k + i
    return s, k


@loom.kernel
def int_ops(a: I32, b: I32) -> (I32, I32, I32, F64):
    return a // b, a % b, (a << 2) ^ b, F64(a) / F64(b)


@loom.kernel
def selects(x: F32, A: MemRef[(4,), F32], i: Index) -> F32:
    a = x if x > 0.0 else -x
    b = A[i] if i < 4 else F32(0.0)
    ok = i > 0 and A[i - 1] > 0.0
    return a + b + F32(ok) + abs(x) + lm.sqrt(abs(x)) + x**2


@loom.kernel
def tiles(A: MemRef[(8, 8), F32], B: MemRef[(8,), F32]):
    for t in range(0, 8, 4):
        T = A[t:t + 4, 2:6]
        T[0, 0] = 100.0
    row = A[3, 0:8:2]
    row[1] = -1.0
    buf = alloc((4,), F32)
    tmp = alloca((2,), F32)
    for j in range(4):
        buf[j] = A[7, j]
    tmp[0] = buf[0] + buf[3]
    B[0] = tmp[0]


@loom.kernel
def math_mix(x: F32) -> F32:
    return math.exp(x) + math.log(x + 2.0) + math.tanh(x) + math.sin(x) * math.cos(x) + \
        math.floor(x) + math.ceil(x) + math.pow(x, 2.0) + lm.exp(x)


ALL = [matmul, matmul_affine, triangle_affine, conv2d_nchw, stencil, softmax, prefix_sum, both_arms, clamp_elif,
       scale_add, uses_call, double_call, par_scale, collatz, poly, int_ops, selects, tiles, math_mix]
