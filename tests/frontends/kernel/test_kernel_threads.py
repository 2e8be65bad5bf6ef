"""Kernels traced on several threads at once (``loom build --threads``, user threads) give the IR one thread gives.

Each round, 8 threads start together on fresh kernels, some the same Kernel object, some different, with a tiny
switch interval. Before the fix a round failed with a false "recursive kernel calls" error, "Can't add to a block
an operation already attached to a block" (one func.func put into two modules), or a constant hoisted into
another thread's function.
"""

from __future__ import annotations

import threading

import numpy as np
from xdsl.ir import Block

from loom import F32, I32, Dim, MemRef, linalg
from loom.frontends.kernel import values
from loom.jit import Kernel
from tests.threads import run_together

M, N, K = Dim("M"), Dim("N"), Dim("K")
THREADS, ROUNDS = 8, 12


def _mm(A: MemRef[(M, K), I32], B: MemRef[(K, N), I32], C: MemRef[(M, N), I32]):
    linalg.matmul(A, B, C)  # xDSL builds the matmul body with its own implicit builder


def _axpy(x: MemRef[(N,), F32], y: MemRef[(N,), F32]):
    for i in range(N):
        y[i] = 2.0 * x[i] + y[i] + 1.0  # constants hoisted to the function entry


def _affine(x: MemRef[(N,), I32]):
    for i in range(N):
        x[i] = x[i] * 3 + 7


def _triple(x: MemRef[(N,), I32]):
    for i in range(N):
        x[i] = x[i] * 3


def _caller(x: MemRef[(N,), I32], y: MemRef[(N,), I32]):
    triple(x)  # traced on first use, inside the caller's trace
    for i in range(N):
        y[i] = x[i] + 5


FUNCTIONS = (_mm, _axpy, _affine, _caller)
triple = Kernel(_triple, name="triple")  # rebound to a fresh kernel every round


def _fresh() -> list[Kernel]:
    global triple
    triple = Kernel(_triple, name="triple")
    return [Kernel(f, name=f.__name__[1:]) for f in FUNCTIONS]


def test_threads_trace_the_ir_one_thread_traces():
    expected = [str(k.module) for k in _fresh()]  # one thread
    kernels: list[Kernel] = []
    picks = np.random.default_rng(7).integers(0, len(FUNCTIONS), (ROUNDS, THREADS))  # repeats: shared kernels

    def trace(t: int, r: int) -> None:
        k = picks[r, t]
        assert str(kernels[k].module) == expected[k], f"{FUNCTIONS[k].__name__}: differs from the one-thread IR"

    failures = run_together(trace, THREADS, ROUNDS, before_round=lambda: kernels.__setitem__(slice(None), _fresh()))
    assert not failures, f"{len(failures)} of {ROUNDS * THREADS} traces failed; first: {failures[0][:400]}"


def test_a_kernel_first_used_on_many_threads_is_traced_once():
    modules: list = []
    caller: list[Kernel] = []

    def fresh_caller() -> None:
        modules.clear()
        caller[:] = [_fresh()[3]]  # its callee is traced inside its trace

    def use(t: int, r: int) -> None:
        modules.append(caller[0].module)

    failures = run_together(use, THREADS, 1, before_round=fresh_caller)
    assert not failures, failures[0][:400]
    assert len(modules) == THREADS and all(m is modules[0] for m in modules)
    assert [op.sym_name.data for op in modules[0].body.block.ops] == ["caller", "triple"]
    modules[0].verify()


def test_each_thread_hoists_constants_into_its_own_function():
    both_set = threading.Barrier(2, timeout=10)
    blocks: dict[int, Block] = {}

    def trace(t: int) -> None:
        ctx = values.EmitContext(Block())
        old = values.set_context(ctx)
        try:
            both_set.wait()  # the other thread has set its context too
            values.const_value(t + 1, I32)
            both_set.wait()  # and has not restored its old one yet
        finally:
            values.set_context(old)
        blocks[t] = ctx.entry_block

    pool = [threading.Thread(target=trace, args=(t,)) for t in range(2)]
    for th in pool:
        th.start()
    for th in pool:
        th.join(timeout=20)
    assert [[op.value.value.data for op in blocks[t].ops] for t in range(2)] == [[1], [2]]
