"""Build and load the C DMA runtime (plus accelerator models) with ctypes.

``build_library()`` compiles every ``*.c`` of this folder as C11 with
``-fvisibility=hidden`` (only the ``LOOM_API`` functions of ``dma_runtime.h``
are exported) into one shared object of the compile cache
(``loom.core.compile_cache``: ``$CC``, ``$CFLAGS``, ``$LOOM_CACHE_DIR``, verified
objects). ``build_library(extra_sources)`` builds the extra sources (a
hand-written or benchmark driver) into their own object linked against that
runtime library, like generated drivers, so one process has one runtime
instance. ``LOOM_SANITIZE=1`` switches to ``-O1 -g -fsanitize=address,undefined``.

``load_library()`` returns the loaded ``ctypes.CDLL`` with argument and result
types generated from the header (``loom.runtime.abi``).
"""

from __future__ import annotations

import ctypes
import os
import subprocess
from pathlib import Path
from typing import Iterable, Sequence

from loom.core import compile_cache
from loom.errors import LoomError
from loom.runtime.abi import header_abi

RUNTIME_DIR = Path(__file__).resolve().parent
HEADER = RUNTIME_DIR / "dma_runtime.h"
C_STANDARD = "c11"

OPT_FLAGS = ["-O3"]
SANITIZE_FLAGS = ["-O1", "-g", "-fsanitize=address,undefined", "-fno-sanitize-recover=undefined"]
COMMON_FLAGS = ["-fPIC", "-shared", "-Wall", "-Wextra"]
HIDDEN_FLAGS = ["-fvisibility=hidden"]


def runtime_sources() -> list[Path]:
    """The C files of the runtime and the models, in a stable order."""
    return sorted(RUNTIME_DIR.glob("*.c"))


def runtime_headers() -> list[Path]:
    """Headers, plus the shipped model sources the runtime includes (builtin_*.c)."""
    return sorted(RUNTIME_DIR.glob("*.h")) + sorted((RUNTIME_DIR / "models").glob("*.c"))


def sanitizing() -> bool:
    return os.environ.get("LOOM_SANITIZE") == "1"


def cache_dir() -> Path:
    return compile_cache.cache_dir()


def compile_flags() -> list[str]:
    """Optimisation (or sanitizer) and common flags (the standard is passed separately)."""
    return (SANITIZE_FLAGS if sanitizing() else OPT_FLAGS) + COMMON_FLAGS


def run_compiler(command: Sequence[str]) -> None:
    """Run a C compiler command; LoomError with its diagnostics if it fails."""
    try:
        result = subprocess.run(list(command), capture_output=True, text=True)
    except OSError as err:
        raise LoomError(f"C compiler cannot be run: {err}", where=" ".join(command)) from None
    if result.returncode != 0:
        raise LoomError(f"C compilation failed (exit {result.returncode}):\n{result.stderr.strip()}",
                        where=" ".join(command))


def build_library(extra_sources: Sequence[Path | str] = (), name: str = "loom_runtime",
                  depends: Sequence[Path] = ()) -> Path:
    """The runtime + models as a cached .so; with ``extra_sources``, those linked against it.
    ``depends``: headers of the extra sources (they enter the cache key by content)."""
    include = [f"-I{RUNTIME_DIR}"]
    runtime = compile_cache.shared_object(
        std=C_STANDARD, flags=compile_flags() + HIDDEN_FLAGS + include, files=runtime_sources(),
        depends=runtime_headers(), stem="loom_runtime-")
    if not extra_sources:
        return runtime
    return compile_cache.shared_object(
        std=C_STANDARD, flags=compile_flags() + include, files=[Path(s).resolve() for s in extra_sources],
        depends=[*runtime_headers(), *depends], trailing=[str(runtime), f"-Wl,-rpath,{runtime.parent}"], stem=f"{name}-")


# -- ctypes declarations of the public API, generated from the header -----------------

_ABI = header_abi(HEADER)
TraceCounters = _ABI.structs["loom_trace_counters"]
TimingReport = _ABI.structs["loom_timing_report"]


def declare_prototypes(lib: ctypes.CDLL) -> ctypes.CDLL:
    return header_abi(HEADER).declare(lib)


_loaded: dict[Path, ctypes.CDLL] = {}


def load_library(extra_sources: Iterable[Path | str] = (), name: str = "loom_runtime",
                 depends: Sequence[Path] = ()) -> ctypes.CDLL:
    """Build (if needed) and load runtime + ``extra_sources``; one CDLL per built file.

    The CDLL of extra sources also resolves the runtime's API (its dependency)."""
    path = build_library(list(extra_sources), name=name, depends=depends)
    if path not in _loaded:
        _loaded[path] = declare_prototypes(ctypes.CDLL(str(path)))
    return _loaded[path]


_runtime_by_env: dict[tuple, ctypes.CDLL] = {}


def runtime_library() -> ctypes.CDLL:
    """The runtime + models alone, loaded once per process and build environment: later calls
    skip hashing the sources and the object (the environment decides which object it is)."""
    env = tuple(os.environ.get(v) for v in ("LOOM_CACHE_DIR", "LOOM_SANITIZE", "CC", "CFLAGS", "LOOM_CFLAGS"))
    if env not in _runtime_by_env:
        _runtime_by_env[env] = load_library()
    return _runtime_by_env[env]
