"""Build and run the hand-written baseline drivers.

``load_drivers()`` compiles the drivers with the loom runtime into a shared
object (``loom.runtime.build``, cached by content hash) and declares their
ctypes prototypes; ``matmul`` (any flow, optionally coalesced / double-buffered),
``matmul_ns`` and ``conv_os`` call them on numpy arrays and
raise ``LoomError`` on a runtime error. ``build_harness()`` builds the
standalone executable (``harness.c``) that valgrind and the timer run; there
the simulator sources are compiled so that their copies are charged to
``SIMULATOR_FILES``, which ``loom.perf.measure(..., exclude_files=...)``
drops (on the board that work is done by the DMA engine and the FPGA).
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Sequence

import numpy as np

from loom.errors import LoomError
from loom.runtime import build as runtime_build
from loom.runtime.host import use_model

MANUAL_DIR = Path(__file__).resolve().parent
DRIVER_SOURCES = [MANUAL_DIR / "matmul_flows.c", MANUAL_DIR / "conv_os.c", MANUAL_DIR / "ws_preload.c"]
DRIVER_HEADERS = [MANUAL_DIR / "manual_drivers.h", MANUAL_DIR / "manual_staging.h"]
HARNESS_SOURCE = MANUAL_DIR / "harness.c"
SHIM_SOURCE = MANUAL_DIR / "sim_shims.c"
# Runtime compile units of the simulated accelerator: the shipped models (builtin_*.c include models/*.c),
# the model vtable adapter, the simulator backend.
SIMULATOR_SOURCES = ("builtin_matmul.c", "builtin_conv.c", "models.c", "backend_sim.c")
# Files whose cost is the simulated accelerator's, not the host's (path suffixes in the counts).
SIMULATOR_FILES = ("models/matmul.c", "models/conv.c", "builtin_matmul.c", "builtin_conv.c", "runtime/models.c",
                   "backend_sim.c", SHIM_SOURCE.name)
SIM_DEFINES = ["-Dmemcpy=loom_sim_memcpy", "-Dmemset=loom_sim_memset"]
SHIM_FLAGS = ["-fno-builtin", "-fno-tree-loop-distribute-patterns"]

VERSIONS = (1, 2, 3, 4)
V123_TILES = (4, 8, 16)
V4_TILES = (16, 32, 48, 64)
FLOW_IDS = {"Ns": 0, "As": 1, "Bs": 2, "Cs": 3}  # enum manual_flow
FLOWS = {1: ("Ns",), 2: ("Ns", "As", "Bs"), 3: ("Ns", "As", "Bs", "Cs"), 4: ("Ns", "As", "Bs", "Cs")}
COALESCE, DOUBLE_BUFFER = 1, 2  # enum manual_option

_i64, _i, _p = ctypes.c_int64, ctypes.c_int, ctypes.c_void_p
_PROTOTYPES = {
    **{f"manual_v{v}_ns{suffix}": [_i64, _i64, _i64, _p, _p, _p, _i]
       for v in VERSIONS for suffix in ("", "_f32")},
    "manual_v4_ns_tiles": [_i64, _i64, _i64, _p, _p, _p, _i, _i, _i],
    "manual_matmul": [_i, _i, _i, _i64, _i64, _i64, _p, _p, _p, _i, _i, _i, _i],
    "manual_conv": [_i] + [_i64] * 7 + [_p, _p, _p, _i],
    "manual_conv_os": [_i64] * 7 + [_p, _p, _p],
    "manual_ws_preload": [_i, _i64, _i64, _i64, _p, _p, _p, _i, _i],
    "manual_conv_os_f32": [_i64] * 7 + [_p, _p, _p],
}


_loaded: dict[tuple, ctypes.CDLL] = {}


def load_drivers() -> ctypes.CDLL:
    """The runtime + simulator + manual drivers, loaded with ctypes (built once, cached). Loaded once per
    process and build environment: later calls do not re-hash the sources, which would also flush the CPU
    caches right before a timed driver call."""
    env = tuple(os.environ.get(v) for v in ("LOOM_CACHE_DIR", "LOOM_SANITIZE", "CC", "CFLAGS", "LOOM_CFLAGS"))
    if env not in _loaded:
        lib = runtime_build.load_library(DRIVER_SOURCES, name="loom_manual_drivers", depends=DRIVER_HEADERS)
        for name, argtypes in _PROTOTYPES.items():
            fn = getattr(lib, name)
            fn.restype, fn.argtypes = _i, argtypes
        _loaded[env] = lib
    return _loaded[env]


def _dtype_suffix(*arrays: np.ndarray) -> str:
    dtypes = {a.dtype for a in arrays}
    if dtypes == {np.dtype(np.int32)}:
        return ""
    if dtypes == {np.dtype(np.float32)}:
        return "_f32"
    raise LoomError(f"operands have dtypes {sorted(map(str, dtypes))}; expected all int32 or all float32",
                    where="manual driver arguments")


def _check_contiguous(**arrays: np.ndarray) -> None:
    for name, a in arrays.items():
        if not a.flags.c_contiguous:
            raise LoomError(f"{name} must be C-contiguous (the manual drivers take dense row-major arrays)",
                            where="manual driver arguments")


def _raise_on(rc: int, lib: ctypes.CDLL, driver: str) -> None:
    if rc:
        message = lib.loom_dma_last_error().decode(errors="replace")
        lib.loom_dma_clear_error()
        if not message and rc == 9:
            message = "bad sizes or tile for this driver"
        raise LoomError(f"{message} (runtime error code {rc})", where=driver)


def matmul_ns(version: int, A: np.ndarray, B: np.ndarray, C: np.ndarray, tile: int,
              lib: ctypes.CDLL | None = None) -> np.ndarray:
    """C += A @ B with the hand-written Ns driver for accelerator v``version`` (no coalescing or double buffering)."""
    return matmul(version, "Ns", A, B, C, tile, lib=lib)


def options_mask(coalesce: bool = False, double_buffer: bool = False) -> int:
    return (COALESCE if coalesce else 0) | (DOUBLE_BUFFER if double_buffer else 0)


def matmul(version: int, flow: str, A: np.ndarray, B: np.ndarray, C: np.ndarray, tile: int | tuple[int, int, int],
           coalesce: bool = False, double_buffer: bool = False, lib: ctypes.CDLL | None = None) -> np.ndarray:
    """C += A @ B with the hand-written ``flow`` driver for accelerator v``version``.

    ``tile``: the accelerator size for v1..v3; for v4 a square tile or (tm, tn, tk).
    Selects the simulated model itself (size ``tile`` for v1..v3)."""
    timed_matmul(version, flow, A, B, C, tile, coalesce, double_buffer, lib)
    return C


def timed_matmul(version: int, flow: str, A: np.ndarray, B: np.ndarray, C: np.ndarray,
                 tile: int | tuple[int, int, int], coalesce: bool = False, double_buffer: bool = False,
                 lib: ctypes.CDLL | None = None) -> float:
    """``matmul``, returning the CPU seconds of the calling thread (task clock) spent in the C driver call
    alone (checks and model selection excluded; time the thread was preempted is not counted)."""
    if version not in VERSIONS:
        raise LoomError(f"accelerator version {version}; expected one of {VERSIONS}", where="manual matmul")
    if flow not in FLOWS[version]:
        raise LoomError(f"flow {flow!r}; v{version} has flows {FLOWS[version]}", where="manual matmul")
    if A.ndim != 2 or B.ndim != 2 or C.ndim != 2 or A.shape[1] != B.shape[0] or C.shape != (A.shape[0], B.shape[1]):
        raise LoomError(f"shapes A{A.shape} B{B.shape} C{C.shape}; expected A (M, K), B (K, N), C (M, N)",
                        where="manual matmul")
    suffix = _dtype_suffix(A, B, C)
    _check_contiguous(A=A, B=B, C=C)
    tm, tn, tk = tile if isinstance(tile, tuple) else (tile, tile, tile)
    lib = lib or load_drivers()
    use_model(lib, f"v{version}", 0 if version == 4 else tm, "f32" if suffix else "i32")
    M, K = A.shape
    N = B.shape[1]
    start = time.thread_time()
    rc = lib.manual_matmul(version, FLOW_IDS[flow], options_mask(coalesce, double_buffer), M, N, K,
                           A.ctypes.data, B.ctypes.data, C.ctypes.data, tm, tn, tk, 1 if suffix else 0)
    seconds = time.thread_time() - start
    _raise_on(rc, lib, f"manual_matmul(v{version}, {flow})")
    return seconds


def conv_os(inp: np.ndarray, filters: np.ndarray, out: np.ndarray, stride: int,
            lib: ctypes.CDLL | None = None, coalesce: bool = False, double_buffer: bool = False) -> np.ndarray:
    """out += conv2d(inp NCHW, filters FCHW, stride) with the hand-written driver."""
    timed_conv(inp, filters, out, stride, lib, coalesce, double_buffer)
    return out


def timed_conv(inp: np.ndarray, filters: np.ndarray, out: np.ndarray, stride: int,
               lib: ctypes.CDLL | None = None, coalesce: bool = False, double_buffer: bool = False) -> float:
    """``conv_os``, returning the CPU seconds of the calling thread in the C driver call alone (as
    ``timed_matmul``)."""
    if inp.ndim != 4 or filters.ndim != 4 or out.ndim != 4:
        raise LoomError("expected rank-4 NCHW input, FCHW filters and NCHW output", where="manual conv_os")
    batch, iC, H, W = inp.shape
    oC, fC, fH, fW = filters.shape
    if fC != iC or fH != fW or stride < 1 or fH > H or fW > W:
        raise LoomError(f"input {inp.shape}, filters {filters.shape}, stride {stride}: expected square filters "
                        "with the input's channel count, no larger than the image, stride >= 1",
                        where="manual conv_os")
    expected = (batch, oC, (H - fH) // stride + 1, (W - fW) // stride + 1)
    if out.shape != expected:
        raise LoomError(f"output shape {out.shape}; expected {expected}", where="manual conv_os")
    suffix = _dtype_suffix(inp, filters, out)
    _check_contiguous(inp=inp, filters=filters, out=out)
    lib = lib or load_drivers()
    use_model(lib, "conv", 0, "f32" if suffix else "i32")
    start = time.thread_time()
    rc = lib.manual_conv(options_mask(coalesce, double_buffer), batch, iC, H, W, oC, fH, stride, inp.ctypes.data,
                         filters.ctypes.data, out.ctypes.data, 1 if suffix else 0)
    seconds = time.thread_time() - start
    _raise_on(rc, lib, "manual_conv")
    return seconds


def timed_ws_preload(A: np.ndarray, B: np.ndarray, C: np.ndarray, tile: int, staging_words: int,
                     coalesce: bool = False, lib: ctypes.CDLL | None = None) -> float:
    """C += A @ B (int32) with the hand-written driver of the ws_bias engine, staging buffers of
    ``staging_words`` words; the CPU seconds of the calling thread in the C call. The caller selects
    the engine's model on ``lib``."""
    if A.ndim != 2 or B.ndim != 2 or C.ndim != 2 or A.shape[1] != B.shape[0] or C.shape != (A.shape[0], B.shape[1]):
        raise LoomError(f"shapes A{A.shape} B{B.shape} C{C.shape}; expected A (M, K), B (K, N), C (M, N)",
                        where="manual ws_preload")
    if _dtype_suffix(A, B, C):
        raise LoomError("the ws_bias engine takes int32 operands", where="manual ws_preload")
    _check_contiguous(A=A, B=B, C=C)
    lib = lib or load_drivers()
    start = time.thread_time()
    rc = lib.manual_ws_preload(options_mask(coalesce), A.shape[0], B.shape[1], A.shape[1], A.ctypes.data,
                               B.ctypes.data, C.ctypes.data, tile, staging_words)
    seconds = time.thread_time() - start
    _raise_on(rc, lib, "manual_ws_preload")
    return seconds


# -- the standalone executable ---------------------------------------------------------

def _simulator_units() -> list[tuple[Path, list[str]]]:
    """(source, extra flags) of the runtime + simulator units every standalone harness links."""
    units = [(src, SIM_DEFINES if src.name in SIMULATOR_SOURCES else []) for src in runtime_build.runtime_sources()]
    return [*units, (SHIM_SOURCE, SHIM_FLAGS)]


def harness_flags() -> list[str]:
    """Optimisation (or sanitizer) flags of the runtime build, plus -g so that
    cachegrind charges every count to a source file."""
    base = runtime_build.SANITIZE_FLAGS if runtime_build.sanitizing() else runtime_build.OPT_FLAGS
    return [*base, "-g", "-std=c11", "-Wall", "-Wextra", f"-I{runtime_build.RUNTIME_DIR}", f"-I{MANUAL_DIR}"]


def _digest(flags: Sequence[str], units: Sequence[tuple[Path, list[str]]], headers: Sequence[Path]) -> str:
    digest = hashlib.sha256(" ".join(flags).encode())
    for path in headers:
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    for src, extra in units:
        digest.update(src.name.encode() + b"\0" + " ".join(extra).encode() + b"\0" + src.read_bytes())
    return digest.hexdigest()[:20]


def _compile(units: Sequence[tuple[Path, list[str]]], flags: Sequence[str], folder: Path) -> list[str]:
    objects = []
    for i, (src, extra) in enumerate(units):
        obj = folder / f"{i}_{src.stem}.o"
        runtime_build.run_compiler(["cc", *flags, *extra, "-c", str(src), "-o", str(obj)])
        objects.append(str(obj))
    return objects


def simulator_archive() -> Path:
    """The runtime + simulator objects of the standalone harnesses as one static library, compiled once
    per content (cached like the harnesses): each harness then compiles only its own driver."""
    flags = harness_flags()
    units = _simulator_units()
    target = runtime_build.cache_dir() / f"harness_runtime-{_digest(flags, units, sorted(runtime_build.RUNTIME_DIR.glob('*.h')))}.a"
    if target.exists():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".harness-rt-", dir=target.parent) as tmp:
        archive = Path(tmp) / "runtime.a"
        runtime_build.run_compiler(["ar", "rcs", str(archive), *_compile(units, flags, Path(tmp))])
        os.replace(archive, target)
    return target


def link_harness(name: str, units: Sequence[tuple[Path, list[str]]], key: str = "") -> Path:
    """Compile ``units`` (source, extra flags), link them with ``simulator_archive()`` into the cached
    executable ``name-<digest>`` (``key``: more text for the digest); return its path."""
    flags = harness_flags()
    archive = simulator_archive()
    headers = sorted(MANUAL_DIR.glob("*.h"))
    target = runtime_build.cache_dir() / f"{name}-{_digest([*flags, key, archive.name], units, headers)}"
    if target.exists():
        return target
    # Build inside the cache folder so the final rename is atomic: concurrent
    # builders never see half a file.
    with tempfile.TemporaryDirectory(prefix=f".{name}-build-", dir=target.parent) as tmp:
        linked = Path(tmp) / name
        runtime_build.run_compiler(["cc", *flags, "-o", str(linked), *_compile(units, flags, Path(tmp)),
                                    str(archive), "-lm"])
        os.chmod(linked, 0o755)
        os.replace(linked, target)
    return target


def build_harness() -> Path:
    """Compile the standalone ``manual_harness`` (cached by content hash); return its path."""
    return link_harness("manual_harness", [(src, []) for src in [*DRIVER_SOURCES, HARNESS_SOURCE]])


def driver_options(flow: str = "Ns", coalesce: bool = False, double_buffer: bool = False) -> list[str]:
    """Harness options choosing a flow and the optimisations (matmul_command(..., *driver_options(...)))."""
    return ["--flow", flow] * (flow != "Ns") + ["--coalesce"] * coalesce + ["--double-buffer"] * double_buffer


def matmul_command(version: int, M: int, N: int, K: int, tile: int, *options: str) -> list[str]:
    """Command line running the v``version`` driver (Ns unless ``--flow`` is among the options) once."""
    return [str(build_harness()), "matmul", f"v{version}", str(M), str(N), str(K), str(tile), *options]


def conv_command(batch: int, iC: int, H: int, W: int, oC: int, fHW: int, stride: int,
                 *options: str) -> list[str]:
    return [str(build_harness()), "conv", *map(str, (batch, iC, H, W, oC, fHW, stride)), *options]


def run_harness(command: Sequence[str]) -> str:
    """Run a harness command; its stdout, or LoomError with its stderr on failure."""
    result = subprocess.run(list(command), capture_output=True, text=True)
    if result.returncode != 0:
        raise LoomError(f"exit {result.returncode}: {result.stderr.strip()}", where=" ".join(command))
    return result.stdout
