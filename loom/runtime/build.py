"""Build and load the C DMA runtime (plus accelerator models) with ctypes.

``build_library()`` compiles every ``*.c`` of this folder (plus optional
extra sources, e.g. a generated driver) with ``cc -O3 -fPIC -shared`` into a
shared object cached by content hash under ``$LOOM_CACHE_DIR`` (default
``~/.cache/loom``); the object is written to a temporary name and renamed, so
concurrent builds never see half-written files. ``LOOM_SANITIZE=1`` switches
to ``-O1 -g -fsanitize=address,undefined``.

``runtime_library()`` returns the loaded ``ctypes.CDLL`` with argument and
result types declared for the public API of ``dma_runtime.h``.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import subprocess
import tempfile
from pathlib import Path
from typing import Iterable, Sequence

from loom.errors import LoomError

RUNTIME_DIR = Path(__file__).resolve().parent
HEADER = RUNTIME_DIR / "dma_runtime.h"

OPT_FLAGS = ["-O3"]
SANITIZE_FLAGS = ["-O1", "-g", "-fsanitize=address,undefined", "-fno-sanitize-recover=undefined"]
COMMON_FLAGS = ["-fPIC", "-shared", "-std=c11", "-Wall", "-Wextra"]


def runtime_sources() -> list[Path]:
    """The C files of the runtime and the models, in a stable order."""
    return sorted(RUNTIME_DIR.glob("*.c"))


def sanitizing() -> bool:
    return os.environ.get("LOOM_SANITIZE") == "1"


def cache_dir() -> Path:
    root = os.environ.get("LOOM_CACHE_DIR")
    return Path(root) if root else Path.home() / ".cache" / "loom"


def compile_flags() -> list[str]:
    return (SANITIZE_FLAGS if sanitizing() else OPT_FLAGS) + COMMON_FLAGS


def run_compiler(command: Sequence[str]) -> None:
    """Run a C compiler command; LoomError with its diagnostics if it fails."""
    result = subprocess.run(list(command), capture_output=True, text=True)
    if result.returncode != 0:
        raise LoomError(f"C compiler failed (exit {result.returncode}):\n{result.stderr.strip()}",
                        where=" ".join(command))


def build_library(extra_sources: Sequence[Path | str] = (), name: str = "loom_runtime") -> Path:
    """Compile runtime + models (+ ``extra_sources``) into a cached .so; return its path."""
    sources = runtime_sources() + [Path(s).resolve() for s in extra_sources]
    headers = sorted(RUNTIME_DIR.glob("*.h"))
    flags = compile_flags() + [f"-I{RUNTIME_DIR}"]
    digest = hashlib.sha256()
    for path in [*headers, *sources]:
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    digest.update(" ".join(flags).encode())
    target = cache_dir() / f"{name}-{digest.hexdigest()[:20]}.so"
    if target.exists():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=target.stem, suffix=".tmp.so", dir=target.parent)
    os.close(fd)
    try:
        run_compiler(["cc", *flags, "-o", tmp, *map(str, sources)])
        os.chmod(tmp, 0o755)
        os.replace(tmp, target)  # atomic: readers see the old or the whole new file
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return target


# -- ctypes prototypes of the public API ---------------------------------------------

class TraceCounters(ctypes.Structure):
    _fields_ = [
        ("sends", ctypes.c_int64),
        ("recvs", ctypes.c_int64),
        ("words_sent", ctypes.c_int64),
        ("words_received", ctypes.c_int64),
        ("bytes_sent", ctypes.c_int64),
        ("bytes_received", ctypes.c_int64),
    ]


_i, _u32, _i64, _u64, _p = ctypes.c_int, ctypes.c_uint32, ctypes.c_int64, ctypes.c_uint64, ctypes.c_void_p
_PROTOTYPES: dict[str, tuple[object, list[object]]] = {
    "loom_dma_last_error": (ctypes.c_char_p, []),
    "loom_dma_error_code": (_i, []),
    "loom_dma_clear_error": (None, []),
    "loom_dma_use_backend": (_i, [_i]),
    "loom_sim_use_model": (_i, [_i, _i, _i]),
    "loom_model_id_from_name": (_i, [ctypes.c_char_p]),
    "loom_dma_use_axi_platform": (None, [_p]),
    "loom_axi_set_poll_limit": (None, [_u64]),
    "dma_init": (_i, [_u64, _u64, _i64, _u64, _i64]),
    "dma_free": (_i, []),
    "dma_in_buffer": (ctypes.POINTER(_u32), []),
    "dma_out_buffer": (ctypes.POINTER(_u32), []),
    "dma_in_size": (_i64, []),
    "dma_out_size": (_i64, []),
    "write_literal": (_i, [_u32, _i]),
    "dma_start_send": (_i, [_i, _i]),
    "dma_wait_send": (_i, []),
    "dma_check_send": (_i, []),
    "dma_start_recv": (_i, [_i, _i]),
    "dma_wait_recv": (_i, []),
    "dma_check_recv": (_i, []),
    "loom_dma_set_tracing": (None, [_i]),
    "loom_trace_set_operand_bytes": (None, [_i]),
    "loom_trace_get_counters": (None, [ctypes.POINTER(TraceCounters)]),
    "loom_trace_reset": (None, []),
    "loom_trace_record_count": (_i64, []),
    "loom_trace_record": (_i, [_i64, ctypes.POINTER(_i), ctypes.POINTER(_i), ctypes.POINTER(_u32)]),
    "loom_fake_axi_platform": (_p, []),
    "loom_fake_axi_reset": (None, []),
    "loom_fake_axi_log_count": (_i64, []),
    "loom_fake_axi_log_entry": (_i, [_i64, ctypes.POINTER(_i), ctypes.POINTER(_u32), ctypes.POINTER(_u32)]),
}
for _kind in ("to_inbuffer", "from_outbuffer", "from_outbuffer_acc"):
    for _t in ("f32", "i32"):
        _PROTOTYPES[f"copy_{_kind}_{_t}"] = (_i, [_i64, _p, _i])


for _kind in ("to_inbuffer_padded", "from_outbuffer_padded", "from_outbuffer_padded_acc"):
    for _t in ("f32", "i32"):
        _PROTOTYPES[f"copy_{_kind}_{_t}"] = (_i, [_i64, _p, _i, _i64, _i64, _i64, _i64])
for _kind in ("deferred", "deferred_acc"):
    for _t in ("f32", "i32"):
        _PROTOTYPES[f"copy_from_outbuffer_{_kind}_{_t}"] = (_i, [_i64, _p, _i, _i64, _i64, _i64, _i64])
_PROTOTYPES["loom_dma_set_double_buffering"] = (_i, [_i])
_PROTOTYPES["loom_dma_drain_recvs"] = (_i, [])


class TimingReport(ctypes.Structure):
    """``loom_timing_report`` of dma_runtime.h (seconds, then counts)."""

    _fields_ = [(name, ctypes.c_double) for name in
                ("total_s", "host_copy_s", "host_other_s", "dma_s", "compute_s", "wait_s")] + \
               [(name, ctypes.c_int64) for name in ("sends", "recvs", "words_sent", "words_received", "macs")]


_PROTOTYPES["loom_timing_configure"] = (_i, [ctypes.c_double, ctypes.c_double, _i, _i])
_PROTOTYPES["loom_timing_set_host_model"] = (_i, [_i, ctypes.c_double, ctypes.c_double])
_PROTOTYPES["loom_timing_get_report"] = (None, [ctypes.POINTER(TimingReport)])
_PROTOTYPES["loom_operand_tally"] = (_i64, [_p, _i])
_PROTOTYPES["loom_operand_tally_reset"] = (None, [])
_PROTOTYPES["loom_copy_use_memcpy"] = (_i, [_i])
_PROTOTYPES["loom_copy_memcpy_enabled"] = (_i, [])


def declare_prototypes(lib: ctypes.CDLL) -> ctypes.CDLL:
    for name, (restype, argtypes) in _PROTOTYPES.items():
        fn = getattr(lib, name)
        fn.restype, fn.argtypes = restype, argtypes
    return lib


_loaded: dict[Path, ctypes.CDLL] = {}


def load_library(extra_sources: Iterable[Path | str] = (), name: str = "loom_runtime") -> ctypes.CDLL:
    """Build (if needed) and load runtime + ``extra_sources``; one CDLL per built file."""
    path = build_library(list(extra_sources), name=name)
    if path not in _loaded:
        _loaded[path] = declare_prototypes(ctypes.CDLL(str(path)))
    return _loaded[path]


def runtime_library() -> ctypes.CDLL:
    """The runtime + models alone, loaded once per process."""
    return load_library()
