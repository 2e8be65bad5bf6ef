"""Kernels a new user wrote against the kernel path (the findings of a user's pass); the lines that must be
reported carry a unique ``# U:<tag>`` marker."""

import math

import loom
from loom.frontends.kernel import F32, F64, I8, I32, Dim, Index, MemRef

N = Dim("N")


@loom.kernel
def i8_above(X: MemRef[(N,), I8], Y: MemRef[(N,), I32]):
    for i in range(X.shape[0]):
        if X[i] > 200:  # U:i8cmp
            Y[i] = 1


@loom.kernel
def i32_floordiv_wide(X: MemRef[(N,), I32]):
    for i in range(X.shape[0]):
        X[i] = X[i] // 3000000000  # U:i32div


@loom.kernel
def i8_max_wide(X: MemRef[(N,), I8]):
    for i in range(X.shape[0]):
        X[i] = max(X[i], 255)  # U:i8max


@loom.kernel
def i8_mask(X: MemRef[(N,), I8]):
    """Bitwise ops read no sign: 0xF0 keeps its bit pattern (-16 as i8)."""
    for i in range(X.shape[0]):
        X[i] = X[i] & 0xF0


@loom.kernel
def f32_huge(X: MemRef[(N,), F32]):
    for i in range(X.shape[0]):
        X[i] = X[i] * 1e40  # U:f32huge


@loom.kernel
def f32_inf_floor(X: MemRef[(N,), F32]) -> F32:
    m = F32(-math.inf)
    for i in range(X.shape[0]):
        m = max(m, X[i])
    return m


@loom.kernel
def f64_huge_int(x: F64) -> F64:
    return x * 10**400  # U:f64hugeint


@loom.kernel
def reverse_copy(X: MemRef[(N,), F32], Y: MemRef[(N,), F32]):
    n = X.shape[0]
    for i in range(n - 1, -1, -1):  # counting down: was refused ("range step must be positive")
        Y[n - 1 - i] = X[i]


@loom.kernel(loops="affine")
def reverse_copy_affine(X: MemRef[(N,), F32], Y: MemRef[(N,), F32]):
    n = X.shape[0]
    for i in range(n - 1, -1, -1):
        Y[n - 1 - i] = X[i]


@loom.kernel
def every_other_down(X: MemRef[(7,), F32], Y: MemRef[(7,), F32]):
    c = 0
    for i in range(6, 0, -2):
        Y[c] = X[i]
        c += 1


def _gather_range(loops):
    @loom.kernel(loops=loops, name=f"gather_range_{loops}")
    def gather_range(X: MemRef[(N,), I32], Y: MemRef[(N,), I32], a: Index, b: Index, st: Index) -> Index:
        c = 0
        for i in range(a, b, st):  # U:dynstep
            Y[c] = X[i]
            c += 1
        return c

    return gather_range


gather_range_scf = _gather_range("scf")
gather_range_affine = _gather_range("affine")


@loom.kernel
def zero_step(X: MemRef[(N,), F32]):
    for i in range(0, X.shape[0], 0):  # U:zerostep
        X[i] = 0.0


@loom.kernel
def int_powers(X: MemRef[(N,), I32], E: MemRef[(N,), I32], Y: MemRef[(N,), I32]):
    for i in range(X.shape[0]):
        Y[i] = X[i] ** E[i] + 2 ** X[i]


import numpy as np  # noqa: E402

from tests.frontends.kernel import kernel_user_helpers as H  # noqa: E402
from tests.frontends.kernel.kernel_user_helpers import clamp, sq  # noqa: E402


@loom.kernel
def uses_helpers(X: MemRef[(N,), F32], Y: MemRef[(N,), F32], S: MemRef[(N,), F32], I: MemRef[(N,), I32]):
    def shifted(v, by=1.0):  # a nested def, called directly: inlined with the kernel's scope
        return v + by

    for i in range(X.shape[0]):
        s, a = H.sign_and_abs(X[i])
        S[i] = s
        Y[i] = shifted(clamp(sq(X[i]), 0.5, 2.0)) + shifted(a, by=10.0)
        I[i] = H.scaled(I[i]) + H.scaled(I[i], k=1)


@loom.kernel
def helper_stores(Y: MemRef[(N,), F32]):
    for i in range(0, Y.shape[0] - 1, 2):
        H.store_twice(Y, i, F32(i))


@loom.kernel
def carried_through_helper(X: MemRef[(N,), F64]) -> F64:
    acc = 0.0
    for i in range(X.shape[0]):
        acc = acc + sq(X[i])
    return acc


@loom.kernel
def calls_bad_helper(x: F32) -> F32:
    return H.cube_bad(x)  # U:callbad


@loom.kernel
def calls_recursive_helper(x: F32) -> F32:
    return H.forever(x)


@loom.kernel
def calls_numpy(X: MemRef[(N,), F32]):
    for i in range(X.shape[0]):
        X[i] = np.clip(X[i], 0.0, 1.0)  # U:npclip


@loom.kernel
def helper_wrong_arity(x: F32) -> F32:
    return sq(x, x)  # U:arity


@loom.kernel
def first_index_of(X: MemRef[(N,), I32], v: I32) -> Index:
    found = X.shape[0]
    for i in range(X.shape[0]):
        if X[i] == v:
            found = i
            break
    return found


@loom.kernel
def sum_skipping_negatives_until_zero(X: MemRef[(N,), I32]) -> I32:
    s = I32(0)
    for i in range(X.shape[0]):
        if X[i] < 0:
            continue
        elif X[i] == 0:
            break
        s += X[i]
        if s > 50:
            s = s - 7
            continue
        s = s * 2
    return s


@loom.kernel
def rows_until_sentinel(A: MemRef[(N, 6), I32], Y: MemRef[(N,), I32]):
    """Nested loops: the inner break leaves only the inner loop; a while with break and continue."""
    for r in range(A.shape[0]):
        c = 0
        for j in range(6):
            if A[r, j] == 9:
                break
            c += A[r, j]
        k = 0
        while True and k < 6:
            k += 1
            if A[r, k - 1] % 2 == 0:
                continue
            if A[r, k - 1] == 7:
                break
            c = c * 3
        Y[r] = c


@loom.kernel
def countdown_break(X: MemRef[(N,), F32]) -> Index:
    last = X.shape[0]
    for i in range(X.shape[0] - 1, -1, -1):
        if X[i] > 0.5:
            last = i
            break
    return last


@loom.kernel
def float_divmod64(A: MemRef[(N,), F64], B: MemRef[(N,), F64], Q: MemRef[(N,), F64], R: MemRef[(N,), F64]):
    for i in range(A.shape[0]):
        Q[i] = A[i] // B[i]
        R[i] = A[i] % B[i]


@loom.kernel
def float_divmod32(A: MemRef[(N,), F32], B: MemRef[(N,), F32], Q: MemRef[(N,), F32], R: MemRef[(N,), F32]):
    for i in range(A.shape[0]):
        Q[i] = A[i] // B[i]
        R[i] = A[i] % B[i]


M = Dim("M")


@loom.kernel
def scale_into(X: MemRef[(M, N), F32], Y: MemRef[(M, N), F32], s: F32):
    for i in range(X.shape[0]):
        for j in range(X.shape[1]):
            Y[i, j] = X[i, j] * s


@loom.kernel
def add_k(X: MemRef[(N,), I32], k: I32, j: Index) -> I32:
    return X[j] + k


@loom.kernel
def vec_sum(R: MemRef[(N,), F32]) -> F32:
    s = F32(0.0)
    for i in range(R.shape[0]):
        s += R[i]
    return s


@loom.kernel
def vec_scale(R: MemRef[(N,), F32], s: F32):
    for i in range(R.shape[0]):
        R[i] = R[i] * s


@loom.kernel
def sums_of_slices(A: MemRef[(M, N), F32], rows: MemRef[(M,), F32], cols: MemRef[(N,), F32], odd: MemRef[(1,), F32]):
    for i in range(A.shape[0]):
        rows[i] = vec_sum(A[i, :])
    for j in range(A.shape[1]):
        cols[j] = vec_sum(A[:, j])
    odd[0] = vec_sum(A[1, 1::2])


@loom.kernel
def scale_columns(A: MemRef[(M, N), F32]):
    for j in range(A.shape[1]):
        vec_scale(A[:, j], F32(j + 1))  # a callee writing through a column view


@loom.kernel
def numpy_style_rows(A: MemRef[(M, N), F32], B: MemRef[(M, N), F32]) -> F32:
    A[0, :] = 0.0  # fill a row
    A[:, 1] = B[:, 2]  # copy a column
    A[2] = B[0]  # A[i] of a matrix is its row, as in numpy
    A[1, 2:] = 5.0
    A[2][0] = 7.0  # chained indexing writes through the row view
    return A[1][2] + B[1][1]


@loom.kernel
def slice_shape_mismatch(A: MemRef[(3, 4), F32], B: MemRef[(3, 4), F32]):
    A[0, :] = B[:, 0]  # U:sliceshape


@loom.kernel(checked=True)
def slice_copy_checked(A: MemRef[(M, N), F32], B: MemRef[("P", "Q"), F32]):
    A[0, :] = B[:, 0]  # U:slicedyn


GAMMA = (np.linspace(0.0, 1.0, 16) ** 2.2).astype(np.float32)
TAPS = np.array([[1, 2, 1], [2, 4, 2], [1, 2, 1]], np.int32)
ODD = np.array([False, True, False, True])
SPECIAL = np.array([np.nan, -np.inf, -0.0, 1e-300], np.float64)


@loom.kernel
def gamma_blur(X: MemRef[(M, N), I32], Y: MemRef[(M, N), F32]):
    """A gamma lookup (LUT[data]) and a 3x3 blur with taps from module-level numpy arrays."""
    for i in range(1, X.shape[0] - 1):
        for j in range(1, X.shape[1] - 1):
            s = I32(0)
            for di in range(3):
                for dj in range(3):
                    s += TAPS[di, dj] * X[i + di - 1, j + dj - 1]
            Y[i, j] = GAMMA[Index(s // 16)]


@loom.kernel
def table_kinds(k: Index) -> (I32, F64):
    return I32(ODD[k % 4]), SPECIAL[k % 4]


@loom.kernel
def calls_with_table(k: Index) -> F32:
    return GAMMA[k] + vec_sum(GAMMA[0:2])  # U:tablecall


@loom.kernel
def writes_table(k: Index):
    GAMMA[k] = 0.0  # U:tablewrite


@loom.kernel
def writes_table_slice():
    GAMMA[0:2] = 0.0  # U:tableslice


COEF = (0.25, 0.5, 0.25)


@loom.kernel
def iterate_forms(X: MemRef[(N,), F32], Y: MemRef[(N,), F32], A: MemRef[(M, N), F32]) -> F32:
    s = F32(0.0)
    for v in X:
        s += v
    for i, v in enumerate(X):
        Y[i] = v * F32(i)
    for a, b in zip(X, Y):
        s += a * b
    for r, row in enumerate(A):
        for v in row:
            s += v * F32(r)
    return s


@loom.kernel
def smooth3(X: MemRef[(N,), F32], Y: MemRef[(N,), F32]):
    for i in range(1, X.shape[0] - 1):
        s = F32(0.0)
        k = -1
        for c in COEF:  # a Python tuple: unrolled at trace time
            s += c * X[i + k]
            k += 1
        Y[i] = s


@loom.kernel
def tuple_loop_break(X: MemRef[(N,), F32]):
    for c in COEF:  # U:tuplebreak
        if X[0] > c:
            break


@loom.kernel
def find_first(X: MemRef[(N,), I32], v: I32) -> Index:
    for i in range(X.shape[0]):
        if X[i] == v:
            return i
    return X.shape[0]


@loom.kernel
def find_pair(A: MemRef[(M, N), F32], target: F32) -> (Index, Index, F32):
    if A.shape[0] == 0:
        return 0, 0, F32(-1.0)
    for i in range(A.shape[0]):
        for j in range(A.shape[1]):
            if A[i, j] > target:
                return i, j, A[i, j]
    return A.shape[0], A.shape[1], F32(0.0)


@loom.kernel
def newton_sqrt(x: F64) -> F64:
    if x <= 0.0:
        return 0.0
    g = x
    k = 0
    while k < 100:
        nxt = 0.5 * (g + x / g)
        if abs(nxt - g) < 1e-12:
            return nxt
        g = nxt
        k += 1
    return -1.0


@loom.kernel
def zero_until_negative(X: MemRef[(N,), F32]):
    for i in range(X.shape[0]):
        if X[i] < 0.0:
            return
        X[i] = 0.0


@loom.kernel
def early_unannotated(X: MemRef[(N,), F32]):
    for i in range(X.shape[0]):
        if X[i] < 0.0:
            return i  # U:earlyunann
    return X.shape[0]


@loom.kernel
def may_fall_off(X: MemRef[(N,), F32]) -> Index:
    for i in range(X.shape[0]):  # U:falloff
        if X[i] < 0.0:
            return i


@loom.kernel
def returns_from_parallel(X: MemRef[(N,), F32]) -> Index:
    for i in loom.parallel(X.shape[0]):
        if X[i] > 0.0:
            return i  # U:parret
    return 0


from loom.frontends.kernel import U8, U16, U32, I16, linalg  # noqa: E402

U8_CURVE = np.array([min(255, 2 * v) for v in range(256)], np.uint8)


@loom.kernel
def u8_pixels(X: MemRef[(N,), U8], Y: MemRef[(N,), U8], T: MemRef[(N,), F32], C: MemRef[(N,), I32]) -> U8:
    """uint8 image arithmetic: comparisons, //, %, >> and max read the bits as unsigned."""
    m = U8(0)
    for i in range(X.shape[0]):
        v = X[i]
        C[i] = I32(v > 200) + I32(v >= 128) * 2
        Y[i] = U8_CURVE[Index(255 - v // 3 + (v >> 4) % 7)]
        T[i] = F32(v) * 0.5
        m = max(m, v)
    return m


@loom.kernel
def unsigned_casts(a: U16, b: U32, f: F32, s: I16) -> (I32, Index, U8, F64, I16, U16):
    return I32(a), Index(b), U8(f), F64(b), I16(a), U16(s)


@loom.kernel
def u8_row_max(R: MemRef[(N,), U8]) -> U8:
    m = U8(0)
    for v in R:
        m = max(m, v)
    return m


@loom.kernel
def u8_image_maxima(A: MemRef[(M, N), U8], out: MemRef[(M,), U8]):
    for i in range(A.shape[0]):
        out[i] = u8_row_max(A[i, :])


@loom.kernel
def u8_literal_too_big(X: MemRef[(N,), U8]):
    X[0] = X[0] + 300  # U:u8lit


@loom.kernel
def i8_into_u8_callee(X: MemRef[(N,), I8]) -> U8:
    return u8_row_max(X)  # U:u8call


@loom.kernel
def u8_into_linalg(X: MemRef[(N,), U8]):
    linalg.fill(0, X)  # U:u8linalg
