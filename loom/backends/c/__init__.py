"""C backend: standard-dialect xDSL IR -> C99 -> shared object -> callable on numpy arrays.

Calling convention of the generated C (matches MLIR's ``_mlir_ciface_`` style):
a memref parameter is a pointer to ``struct { T *allocated; T *aligned; intptr_t
offset; intptr_t sizes[R]; intptr_t strides[R]; }``; scalars are passed by value;
one result is the return value, several results are written through out-pointers
appended after the parameters. Symbols are ``loom_<name>``; private functions are
``static``; body-less (external) functions keep their MLIR name and use the same
convention, so a C runtime passed through ``extra_flags`` can implement them.

    emit_c(module, checked=False, native=False) -> str
    compile_module(module, sanitize=None, extra_flags=(), checked=None, native=None) -> CompiledModule
    CompiledModule.function(name) -> CFunction; CFunction(*args)

Integer division is always checked: a module with an integer div/rem whose divisor
is not a nonzero constant is compiled with the guarded
entry described below, checking only its divisions for a zero divisor, so a
zero divisor raises ``LoomError`` ("integer division by zero in arith.divsi" at the
op's ``file:line:col``) instead of SIGFPE killing the interpreter. Modules with
constant divisors only are unchanged. Cost (``benchmarks/bench_checked_cost.py``):
within noise (-2.5% .. +1.4%) on bench_c_quality's matmul 256^3 and 3x3 stencil 2048^2.

Every memref index and view of a kernel is checked when ``check_gathers=True``, as ``@loom.kernel`` compiles
(``gathers``: data-placed ones at the access, loop-linear ones at the loop's entry, ones under an if in a second
copy of the loop): an out-of-range one raises ``LoomError`` at its op instead of touching memory outside the
array. Without it, index checks are opt-in: they cost nothing measurable on bench_c_quality's loops
(static shapes: gcc proves the indices in range; +0.5% matmul, -4% stencil) but
+262% on the same stencil over ``memref<?x?xf32>`` when every access is checked (matmul dynamic: within noise).
A heap buffer's failed ``malloc`` is a ``LoomError`` at its op (a module with one has the guarded entry).

Shifts (``arith.shli/shrsi/shrui``) have defined results for every amount, those of
numpy: the amount is read as unsigned, and an amount >= the bit width (so also a
negative one) gives 0, or the sign fill (0 or -1) for ``shrsi``. MLIR calls such a
shift poison; C calls it undefined; loom picks numpy's value.

Checked mode (``checked=True``, or ``LOOM_CHECK_BOUNDS=1`` when ``checked=None``;
``@loom.kernel(checked=True)`` for kernels): the generated C checks every index of
memref/affine loads and stores against its dimension, that every subview slice
lies inside its source, that memref.copy shapes agree, and integer div/rem
divisors for zero (signed ``MIN / -1`` wraps to ``MIN``, numpy's answer, with no UB). The first failure unwinds
(setjmp/longjmp) to the exported function, which frees the heap buffers it made
and returns; the call then raises ``LoomError`` such as ``index 17 out of range
for dimension 0 of size 16 in memref.load`` located at the op's ``file:line:col``.
Exported functions take one extra trailing ``loomh_status *`` in this mode (the
runtime passes it). Without checked mode, only guarded modules (run-time divisors) have the wrapper and
status pointer. The modes are separate cache entries. Details in ``checks``.

Parallel code: the outermost ``scf.parallel`` of a function is an OpenMP loop
(the module is then built with ``-fopenmp``; threads from ``OMP_NUM_THREADS``). In a guarded module its
checks cannot longjmp out of the region: they record the earliest failure, skip the rest of the iteration,
and the function reports it after the region (``deferred``); only a loop with a call or a dealloc of an outer
buffer runs serially.
Native mode (``native=True``, or ``LOOM_NATIVE=1`` when ``native=None``) adds
``-march=native``, ``#pragma omp simd`` on provably independent innermost loops
and ``restrict`` data pointers on the public functions Python calls; those
refuse overlapping written arguments; it stays on in a guarded module, where a loop holding a check gets no
simd pragma (``FunctionEmitter.checks_inside``). Rules in ``openmp`` and ``restrict``;
objects are cached by ``loom.core.compile_cache``.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import ModuleOp

from loom.backends.c.checks import checks_requested
from loom.backends.c.compiler import build_shared_object, compile_flags, native_requested, sanitize_requested
from loom.backends.c.emitter import emit_c, lower_module
from loom.backends.c.openmp import prefer_passive_wait, uses_openmp
from loom.backends.c.runtime import CFunction, CompiledModule

__all__ = ["emit_c", "compile_module", "CompiledModule", "CFunction"]

_LOADED: dict[tuple, CompiledModule] = {}


def _signature_key(signatures) -> tuple:
    try:
        return tuple(sorted(signatures.items()))  # frozen dataclasses: hashable
    except TypeError:
        return (repr(sorted(signatures.items())),)


def compile_module(
    module: ModuleOp, *, sanitize: bool | None = None, extra_flags: Sequence[str] = (),
    checked: bool | None = None, native: bool | None = None, check_gathers: bool = False,
) -> CompiledModule:
    """Emit, compile (or reuse a cached object) and load ``module``.

    ``sanitize=None`` follows the environment (``LOOM_SANITIZE=1``). ``extra_flags``
    are appended after the C file: extra C sources or libraries that define the
    module's external (body-less) functions. ``checked=None`` follows the
    environment (``LOOM_CHECK_BOUNDS=1``); see the module docstring. ``native=None``
    follows ``LOOM_NATIVE=1``. ``check_gathers``: check the indices computed from data (``x[idx[k]]``) even
    outside checked mode (``gathers``; ``@loom.kernel`` asks for it).
    """
    native = native_requested(native)
    program = lower_module(module, checked=checks_requested(checked), native=native, check_gathers=check_gathers)
    sanitize = sanitize_requested(sanitize)
    openmp = uses_openmp(program.source)
    flags = compile_flags(sanitize, openmp=openmp, native=native)
    # the site table is not in the C text: same C with other source locations is another entry. Nor are the
    # static shapes the callable checks (the C indexes flat arrays): a 4x1 and a 1x4 kernel can share the C
    # text, and the second was refused its own arrays with the first one's shapes
    key = (program.source, tuple(flags), tuple(extra_flags), program.sites, _signature_key(program.signatures))
    loaded = _LOADED.get(key)
    if loaded is not None:
        return loaded
    so_path = build_shared_object(program.source, sanitize, tuple(extra_flags),
                                  openmp=openmp, native=native)
    if openmp:
        prefer_passive_wait()  # before the module loads the OpenMP runtime, which reads it once
    loaded = CompiledModule(program.source, so_path, program.signatures, program.sites, program.restrict)
    _LOADED[key] = loaded
    return loaded

