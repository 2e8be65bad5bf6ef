"""Example kernels written in loom's Python frontend.

Each entry of ``EXAMPLES`` pairs a kernel with a numpy reference and an input
generator, so the demo, the CLI (``loom run``) and the tests share one
definition of "what the kernel should compute".
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

from loom import F32, I32, Dim, Index, MemRef, kernel, parallel
from loom import linalg

M, N, K = Dim("M"), Dim("N"), Dim("K")
H, W = Dim("H"), Dim("W")
NB, C, O = Dim("NB"), Dim("C"), Dim("O")
IH, IW, KH, KW, OH, OW = Dim("IH"), Dim("IW"), Dim("KH"), Dim("KW"), Dim("OH"), Dim("OW")


@kernel
def matmul_loops(A: MemRef[(M, K), F32], B: MemRef[(K, N), F32], Cm: MemRef[(M, N), F32]):
    for i in range(M):
        for j in range(N):
            acc = Cm[i, j]
            for k in range(K):
                acc = acc + A[i, k] * B[k, j]
            Cm[i, j] = acc


@kernel
def matmul_linalg(A: MemRef[(M, K), F32], B: MemRef[(K, N), F32], Cm: MemRef[(M, N), F32]):
    linalg.matmul(A, B, Cm)


@kernel
def conv2d_nchw(I: MemRef[(NB, C, IH, IW), F32], Fl: MemRef[(O, C, KH, KW), F32],
                Out: MemRef[(NB, O, OH, OW), F32]):
    for n in range(NB):
        for o in range(O):
            for y in range(OH):
                for x in range(OW):
                    acc = Out[n, o, y, x]
                    for c in range(C):
                        for ky in range(KH):
                            for kx in range(KW):
                                acc = acc + I[n, c, y + ky, x + kx] * Fl[o, c, ky, kx]
                    Out[n, o, y, x] = acc


@kernel
def conv2d_nchw_linalg(I: MemRef[(NB, C, IH, IW), F32], Fl: MemRef[(O, C, KH, KW), F32],
                       Out: MemRef[(NB, O, OH, OW), F32]):
    linalg.conv_2d_nchw_fchw(I, Fl, Out)


@kernel
def blur3x3(inp: MemRef[(H, W), F32], out: MemRef[(H, W), F32]):
    """3x3 box blur; border pixels are copied (the `if` arm), inner ones averaged."""
    for i in range(H):
        for j in range(W):
            if i == 0 or j == 0 or i == H - 1 or j == W - 1:
                v = inp[i, j]
            else:
                s = inp[i - 1, j - 1] + inp[i - 1, j] + inp[i - 1, j + 1]
                s = s + inp[i, j - 1] + inp[i, j] + inp[i, j + 1]
                s = s + inp[i + 1, j - 1] + inp[i + 1, j] + inp[i + 1, j + 1]
                v = s / 9.0
            out[i, j] = v


@kernel
def stencil3x3_parallel(A: MemRef[(H, W), F32], B: MemRef[(H, W), F32]):
    """3x3 box average of the interior over a 2-D ``loom.parallel`` loop; the border of B is left alone."""
    for i, j in parallel((1, 1), (H - 1, W - 1)):
        B[i, j] = (A[i - 1, j - 1] + A[i - 1, j] + A[i - 1, j + 1] + A[i, j - 1] + A[i, j] + A[i, j + 1]
                   + A[i + 1, j - 1] + A[i + 1, j] + A[i + 1, j + 1]) * 0.1111111


@kernel
def matmul_ikj(A: MemRef[(M, K), F32], B: MemRef[(K, N), F32], Cm: MemRef[(M, N), F32]):
    """C += A.B in (i, k, j) order: the innermost j loop is independent (a simd candidate)."""
    for i in range(M):
        for k in range(K):
            a = A[i, k]
            for j in range(N):
                Cm[i, j] = Cm[i, j] + a * B[k, j]


@kernel
def matmul_ikj_parallel(A: MemRef[(M, K), F32], B: MemRef[(K, N), F32], Cm: MemRef[(M, N), F32]):
    """``matmul_ikj`` with its row loop as ``loom.parallel`` (an OpenMP team loop)."""
    for i in parallel(M):
        for k in range(K):
            a = A[i, k]
            for j in range(N):
                Cm[i, j] = Cm[i, j] + a * B[k, j]


@kernel
def softmax_rows(X: MemRef[(M, N), F32], Y: MemRef[(M, N), F32]):
    for i in range(M):
        row_max = X[i, 0]
        for j in range(1, N):
            row_max = max(row_max, X[i, j])
        total = F32(0.0)
        for j in range(N):
            e = math.exp(X[i, j] - row_max)
            Y[i, j] = e
            total = total + e
        for j in range(N):
            Y[i, j] = Y[i, j] / total


@kernel
def prefix_sum(x: MemRef[(N,), I32], y: MemRef[(N,), I32]):
    acc = I32(0)
    for i in range(N):
        acc = acc + x[i]
        y[i] = acc


@kernel
def signed_split(x: MemRef[(N,), F32], y: MemRef[(N,), F32], flags: MemRef[(N,), I32]):
    """Both arms of the `if` define `value` and `flag`: they become scf.if results."""
    for i in range(N):
        if x[i] > 0.0:
            value = x[i] * 2.0
            flag = I32(1)
        else:
            value = -x[i]
            flag = I32(-1)
        y[i] = value
        flags[i] = flag


@kernel
def scale_row(X: MemRef[(M, N), F32], row: Index, factor: F32):
    for j in range(N):
        X[row, j] = X[row, j] * factor


@kernel
def scale_rows(X: MemRef[(M, N), F32], factors: MemRef[(M,), F32]):
    for i in range(M):
        scale_row(X, i, factors[i])


@kernel
def add_parallel(A: MemRef[(M, N), F32], B: MemRef[(M, N), F32], Cm: MemRef[(M, N), F32]):
    for i, j in parallel(M, N):
        Cm[i, j] = A[i, j] + B[i, j]


@kernel
def collatz_steps(x: MemRef[(N,), I32], steps: MemRef[(N,), I32]):
    """Number of Collatz steps to reach 1 (a `while` loop with an `if` inside)."""
    for i in range(N):
        v = x[i]
        count = I32(0)
        while v != 1:
            if v % 2 == 0:
                v = v // 2
            else:
                v = 3 * v + 1
            count = count + 1
        steps[i] = count


@kernel
def dot(x: MemRef[(N,), F32], y: MemRef[(N,), F32]) -> F32:
    acc = F32(0.0)
    for i in range(N):
        acc = acc + x[i] * y[i]
    return acc


# ---------------------------------------------------------------- references

def _conv_ref(I, Fl, Out):
    n, c, ih, iw = I.shape
    o, _, kh, kw = Fl.shape
    res = Out.astype(np.float64).copy()
    for ky in range(kh):
        for kx in range(kw):
            patch = I[:, :, ky:ky + Out.shape[2], kx:kx + Out.shape[3]].astype(np.float64)
            res += np.einsum("nchw,oc->nohw", patch, Fl[:, :, ky, kx].astype(np.float64))
    return res.astype(np.float32)


def _blur_ref(inp):
    out = inp.copy()
    s = np.zeros_like(inp[1:-1, 1:-1])
    for dy in range(3):
        for dx in range(3):
            s = s + inp[dy:dy + inp.shape[0] - 2, dx:dx + inp.shape[1] - 2]
    out[1:-1, 1:-1] = s / np.float32(9.0)
    return out


def stencil3x3_parallel_reference(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """What ``stencil3x3_parallel(A, B)`` leaves in B: the interior averaged, the border as it was."""
    out = B.copy()
    acc = np.zeros((A.shape[0] - 2, A.shape[1] - 2), dtype=np.float32)
    for di in range(3):
        for dj in range(3):
            acc = acc + A[di:di + A.shape[0] - 2, dj:dj + A.shape[1] - 2]
    out[1:-1, 1:-1] = acc * np.float32(0.1111111)
    return out


def _softmax_ref(X):
    e = np.exp(X - X.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def _collatz_ref(x):
    out = np.zeros_like(x)
    for idx, v in enumerate(x.tolist()):
        count = 0
        while v != 1:
            v = v // 2 if v % 2 == 0 else 3 * v + 1
            count += 1
        out[idx] = count
    return out


@dataclass(frozen=True)
class Example:
    """A kernel, how to make its inputs, and what numpy says the outputs are.

    ``make_args(rng, scale)`` returns the kernel's arguments; ``reference(args)``
    returns ``{argument index: expected array}`` for the memrefs it writes, and
    ``result`` (if any) is the expected scalar result.
    """

    kernel: object
    make_args: Callable
    reference: Callable
    result: Callable | None = None
    description: str = ""


def _f32(rng, *shape):
    return rng.standard_normal(shape).astype(np.float32)


def _matmul_args(rng, s):
    return [_f32(rng, 5 * s, 3 * s), _f32(rng, 3 * s, 4 * s), _f32(rng, 5 * s, 4 * s)]


def _matmul_ref(a):
    return {2: a[2] + a[0] @ a[1]}


def _conv_args(rng, s):
    return [_f32(rng, 2, 3, 2 * s + 2, 2 * s + 4), _f32(rng, 4, 3, 3, 3),
            np.zeros((2, 4, 2 * s, 2 * s + 2), np.float32)]


def _conv_expected(a):
    return {2: _conv_ref(*a)}


EXAMPLES: dict[str, Example] = {
    "matmul_loops": Example(matmul_loops, _matmul_args, _matmul_ref,
                            description="C += A.B as a Python loop nest (loop-carried accumulator)"),
    "matmul_linalg": Example(matmul_linalg, _matmul_args, _matmul_ref, description="C += A.B through linalg.matmul"),
    "conv2d_nchw": Example(conv2d_nchw, _conv_args, _conv_expected, description="2-D convolution, NCHW x FCHW, as loops"),
    "conv2d_nchw_linalg": Example(conv2d_nchw_linalg, _conv_args, _conv_expected,
                                  description="2-D convolution through linalg.conv_2d_nchw_fchw"),
    "blur3x3": Example(
        blur3x3,
        lambda rng, s: [_f32(rng, 6 * s + 1, 5 * s + 3), np.zeros((6 * s + 1, 5 * s + 3), np.float32)],
        lambda a: {1: _blur_ref(a[0])},
        description="3x3 stencil, borders handled by if/else",
    ),
    "softmax_rows": Example(
        softmax_rows,
        lambda rng, s: [_f32(rng, 3 * s, 7 * s), np.zeros((3 * s, 7 * s), np.float32)],
        lambda a: {1: _softmax_ref(a[0])},
        description="row-wise softmax: max, exp, sum as loop-carried values",
    ),
    "prefix_sum": Example(
        prefix_sum,
        lambda rng, s: [rng.integers(-1000, 1000, 37 * s, dtype=np.int32), np.zeros(37 * s, np.int32)],
        lambda a: {1: np.cumsum(a[0], dtype=np.int32)},
        description="inclusive prefix sum of int32 values",
    ),
    "signed_split": Example(
        signed_split,
        lambda rng, s: [_f32(rng, 50 * s), np.zeros(50 * s, np.float32), np.zeros(50 * s, np.int32)],
        lambda a: {1: np.where(a[0] > 0, a[0] * np.float32(2), -a[0]),
                   2: np.where(a[0] > 0, 1, -1).astype(np.int32)},
        description="an if whose both arms define values",
    ),
    "scale_rows": Example(
        scale_rows,
        lambda rng, s: [_f32(rng, 4 * s, 9 * s), _f32(rng, 4 * s)],
        lambda a: {0: a[0] * a[1][:, None]},
        description="a kernel calling another kernel (func.call)",
    ),
    "add_parallel": Example(
        add_parallel,
        lambda rng, s: [_f32(rng, 6 * s, 5 * s), _f32(rng, 6 * s, 5 * s), np.zeros((6 * s, 5 * s), np.float32)],
        lambda a: {2: a[0] + a[1]},
        description="element-wise add over an scf.parallel loop",
    ),
    "collatz_steps": Example(
        collatz_steps,
        lambda rng, s: [rng.integers(1, 3000, 20 * s, dtype=np.int32), np.zeros(20 * s, np.int32)],
        lambda a: {1: _collatz_ref(a[0])},
        description="a while loop with an if inside (int32)",
    ),
    "dot": Example(
        dot,
        lambda rng, s: [_f32(rng, 64 * s), _f32(rng, 64 * s)],
        lambda a: {},
        result=lambda a: np.float32(np.dot(a[0].astype(np.float64), a[1].astype(np.float64))),
        description="a scalar result (func.return)",
    ),
}
