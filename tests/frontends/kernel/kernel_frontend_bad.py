"""Bad kernels for the error catalogue: each offending line carries a unique `# E:<tag>` marker."""

import numpy as np

import loom
from loom.frontends.kernel import F32, F64, I32, Index, MemRef

TABLE = [1.0, 2.0]
ARR = np.zeros(3, np.complex64)  # numpy arrays are constant tables, but not of complex numbers


@loom.kernel
def bad_try(A: MemRef[(4,), F32]):
    try:  # E:try
        A[0] = 1.0
    except Exception:
        pass


@loom.kernel
def bad_with(A: MemRef[(4,), F32]):
    with open("x"):  # E:with
        A[0] = 1.0


@loom.kernel
def bad_break(A: MemRef[(4,), F32]):
    for i in loom.parallel(4):  # range and while loops take break; a parallel loop cannot
        if A[i] > 0.0:
            break  # E:break
        A[i] = 1.0


@loom.kernel
def bad_continue(A: MemRef[(4,), F32]):
    for i in loom.parallel(4):
        continue  # E:continue


@loom.kernel
def bad_global(A: MemRef[(4,), F32]):
    global TABLE  # E:global
    A[0] = 1.0


@loom.kernel
def bad_lambda(A: MemRef[(4,), F32]):
    f = lambda v: v + 1.0  # E:lambda  # noqa: E731
    A[0] = 1.0


@loom.kernel
def bad_def_call(A: MemRef[(4,), F32]):
    def helper(*v):  # a nested def is inlined where called, but not one taking *args
        return v[0] + 1.0

    A[0] = helper(A[1])  # E:defcall


@loom.kernel
def bad_yield(A: MemRef[(4,), F32]):
    yield A[0]  # E:yield


@loom.kernel
def bad_annotation_int(A: MemRef[(4,), F32], n: int):  # E:annint
    A[0] = 1.0


@loom.kernel
def bad_annotation_elt(A: MemRef[(4,), str]):  # E:annelt
    A[0] = 1.0


@loom.kernel
def bad_missing_annotation(A: MemRef[(4,), F32], n):  # E:annmissing
    A[0] = 1.0


@loom.kernel
def bad_rank(A: MemRef[(4, 4), F32]):
    A[0, 1, 2] = 1.0  # E:rank (A[0] = 1.0 fills row 0, as numpy)


@loom.kernel
def bad_mix_f32_i32(x: F32, n: I32) -> F32:
    return x + n  # E:mixfi


@loom.kernel
def bad_mix_f32_f64(x: F32, y: F64) -> F32:
    z = x * y  # E:mixff
    return x


@loom.kernel
def bad_mix_index_i32(A: MemRef[(4,), F32], n: I32):
    for i in range(4):
        A[i] = F32(i + n)  # E:mixii


@loom.kernel
def bad_float_literal(n: I32) -> I32:
    return n * 1.5  # E:floatlit


@loom.kernel
def bad_store_type(A: MemRef[(4,), F32], x: F64):
    A[0] = x  # E:storetype


@loom.kernel
def bad_closure_list(A: MemRef[(2,), F32]):
    A[0] = TABLE[0]  # E:closurelist


@loom.kernel
def bad_closure_array(A: MemRef[(2,), F32]):
    A[0] = ARR[0]  # E:closurearr


@loom.kernel
def bad_return_types(x: F32, n: I32):
    if x > 0.0:
        return x
    else:
        return n  # E:rettypes


@loom.kernel
def bad_return_in_loop(x: F32):  # returning from a loop needs the result types annotated
    for i in range(3):
        return x  # E:retloop
    return x


@loom.kernel
def bad_loop_local(A: MemRef[(4,), F32]):
    for i in range(4):
        t = A[i]
    A[0] = t  # E:looplocal


@loom.kernel
def bad_one_arm(x: F32) -> F32:
    if x > 0.0:
        y = x
    return y  # E:onearm


@loom.kernel
def bad_unknown_name(x: F32) -> F32:
    return x + undefined_thing  # E:unknown  # noqa: F821


@loom.kernel
def bad_python_call(A: MemRef[(4,), F32]):
    A[0] = np.sum(A)  # E:pycall


@loom.kernel
def bad_print(A: MemRef[(4,), F32]):
    print(A[0])  # E:print


@loom.kernel
def bad_range_kwargs(A: MemRef[(4,), F32]):
    for i in range(start=0, stop=4):  # E:rangekw
        A[i] = 0.0


@loom.kernel
def bad_star_args(A: MemRef[(4,), F32]):
    idx = (0,)
    A[0] = max(*idx)  # E:starargs


@loom.kernel
def bad_augassign_undefined(A: MemRef[(4,), F32]):
    total += A[0]  # E:augundef  # noqa: F821


@loom.kernel
def bad_augassign_target(A: MemRef[(4,), F32]):
    A.shape += 1  # E:augtarget


@loom.kernel
def bad_if_type_mismatch(x: F32, y: F64) -> F32:
    if x > 0.0:  # E:ifmismatch
        z = x
    else:
        z = y
    return x


@loom.kernel
def bad_index_type(A: MemRef[(4,), F32], n: I32):
    A[n] = 1.0  # E:indextype


@loom.kernel
def bad_while_true(A: MemRef[(4,), F32]):
    while True:  # E:whiletrue
        A[0] = 1.0


@loom.kernel
def bad_int_division(a: I32, b: I32) -> I32:
    return a / b  # E:intdiv


@loom.kernel
def bad_call_arity(A: MemRef[(4,), F32]):
    A[0] = helper_kernel(A[1])  # E:arity


@loom.kernel
def helper_kernel(x: F32, y: F32) -> F32:
    return x + y


@loom.kernel
def bad_call_type(A: MemRef[(4,), F32], x: F64):
    A[0] = helper_kernel(A[1], x)  # E:calltype


@loom.kernel
def bad_chain_types(x: F32, n: Index) -> F32:
    if 0 < n < x:  # E:chain
        return x
    return x


@loom.kernel
def bad_parallel_carry(A: MemRef[(4,), F32]):
    s = 0.0
    for i in loom.parallel(4):  # E:parcarry
        s = s + A[i]  # parallel bodies cannot update outer variables
    A[0] = s


@loom.kernel
def bad_memref_arith(A: MemRef[(4,), F32], B: MemRef[(4,), F32]):
    A[0] = A + B  # E:memrefarith


@loom.kernel
def bad_star_params(*args: F32):  # E:starparams
    pass


@loom.kernel
def bad_matmul_op(A: MemRef[(4, 4), F32], B: MemRef[(4, 4), F32], C: MemRef[(4, 4), F32]):
    C[:, :] = A @ B  # E:matmulop


@loom.kernel
def bad_matmul_aug(x: F32) -> F32:
    y = x
    y @= x  # E:matmulaug
    return y


@loom.kernel
def bad_bool_arith(A: MemRef[(4,), I32]) -> I32:
    c = I32(0)
    for i in range(4):
        c += A[i] > 0  # E:boolarith
    return c


@loom.kernel
def bad_iv_after_break(A: MemRef[(4,), I32]) -> Index:
    for i in range(4):
        if A[i] == 0:
            break
    return i  # E:ivafterbreak


@loom.kernel
def bad_sum_builtin(A: MemRef[(4,), F32]) -> F32:
    return sum(A)  # E:sumbuiltin


@loom.kernel
def bad_max_of_memref(A: MemRef[(4,), F32]) -> F32:
    return max(A)  # E:maxmemref


@loom.kernel
def bad_round(x: F64) -> F64:
    return round(x)  # E:round
