"""Compile flags of generated C; the objects go through the one compile cache.

``build_shared_object`` hands the C text to ``loom.core.compile_cache`` (key, atomic
writes, verified objects, ``$CC``/``$CFLAGS``): this module only decides the
flags of kernel C: C99, ``-O3`` (or the sanitizer set), ``-fopenmp`` when the
module has a parallel loop, ``-march=native -fopenmp-simd`` when host-ISA code
is requested (``native=True`` or ``LOOM_NATIVE=1``).
"""

from __future__ import annotations

import os
import pathlib
from collections.abc import Sequence

from loom.core import compile_cache

C_STANDARD = "c99"
BASE_FLAGS = ["-O3", "-fPIC", "-shared"]
SANITIZE_FLAGS = [
    "-O1", "-g", "-fPIC", "-shared", "-fno-omit-frame-pointer",
    "-fsanitize=address,undefined", "-fno-sanitize-recover=undefined",
]
OPENMP_FLAGS = ["-fopenmp"]
NATIVE_FLAGS = ["-march=native", "-fopenmp-simd"]


def compiler() -> str:
    """``$CC`` or ``cc`` (as one string, for scripts that build a command themselves)."""
    return " ".join(compile_cache.compiler())


def sanitize_requested(sanitize: bool | None) -> bool:
    if sanitize is None:
        return os.environ.get("LOOM_SANITIZE", "") == "1"
    return sanitize


def native_requested(native: bool | None) -> bool:
    if native is None:
        return os.environ.get("LOOM_NATIVE", "") == "1"
    return native


# gcc 12.2's value-range propagation at -O2/-O3 drops every output store of some generated pipelines (their
# wrapping index arithmetic `(int32_t)((uint32_t)a * (uint32_t)k)`, in bounds, ASan/UBSan/valgrind clean; right at
# -O1, with -fno-tree-vrp or -fno-ivopts: tests/streaming/test_streaming_fuzz_rates.py, the two gcc cases). Off for
# gcc: bench_c_quality's kernels run within noise without it, -fno-ivopts costs its matmuls 30%. With tree-vrp off,
# -O3's loop unswitching then read a producer row of a checked pipeline as garbage (right at -O2, with tree-vrp or
# under ASan/UBSan: tests/pipelines_cpu/test_cpu_checked_mode.py), so unswitching is off too: bench_c_quality and
# bench_cpu_vs_halide run within noise without it (loom's own loop partitioning hoists its boundary tests).
GCC_WORKAROUND_FLAGS = ["-fno-tree-vrp", "-fno-unswitch-loops"]


def is_gcc() -> bool:
    """Whether $CC is GCC (clang also answers --version, without the FSF line)."""
    ident = compile_cache.compiler_identity(compile_cache.compiler())
    return "Free Software Foundation" in ident and "clang" not in ident


def own_flags(sanitize: bool, openmp: bool = False, native: bool = False) -> list[str]:
    """loom's flags for kernel C, without the standard and the user's $CFLAGS."""
    flags = list(SANITIZE_FLAGS if sanitize else BASE_FLAGS)
    if not sanitize and is_gcc():
        flags += GCC_WORKAROUND_FLAGS
    if openmp:
        flags += OPENMP_FLAGS
    if native:
        flags += NATIVE_FLAGS
    return flags


def compile_flags(sanitize: bool, openmp: bool = False, native: bool = False) -> list[str]:
    """The whole flag list of a kernel compile (standard, own flags, then $CFLAGS $LOOM_CFLAGS)."""
    return [f"-std={C_STANDARD}", *own_flags(sanitize, openmp, native), *compile_cache.user_cflags()]


def cache_dir() -> pathlib.Path:
    return compile_cache.cache_dir()


def build_shared_object(
    source: str, sanitize: bool, extra_flags: Sequence[str] = (), *, openmp: bool = False, native: bool = False,
) -> pathlib.Path:
    """Path of the shared object for ``source``, compiling it on a cache miss.

    ``extra_flags`` go after the C file (extra sources, ``-L``/``-l`` for a runtime
    library); they are part of the cache key but not the contents they name.
    """
    return compile_cache.shared_object(std=C_STANDARD, flags=own_flags(sanitize, openmp, native),
                                       c_source=source, trailing=tuple(extra_flags))
