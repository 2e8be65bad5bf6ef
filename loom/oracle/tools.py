"""Locate and invoke the upstream MLIR command-line tools.

The tools come from the Debian package ``mlir-22-tools`` (``/usr/lib/llvm-22``).
``LOOM_MLIR_BIN`` overrides the directory holding ``mlir-opt``/``mlir-runner``;
``LOOM_MLIR_LIB`` overrides the directory holding the runner support libraries
(default: ``<bin>/../lib``). ``LOOM_MLIR_TIMEOUT`` (seconds, default 300) bounds
each tool invocation so a hung kernel cannot hang the test suite.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from loom.errors import LoomError

DEFAULT_BIN = "/usr/lib/llvm-22/bin"
RUNNER_LIBS = ("libmlir_runner_utils.so", "libmlir_c_runner_utils.so")
# stderr quoted inside a LoomError is cut to this many characters; the head
# holds the first diagnostic, which is the useful one.
MAX_STDERR = 6000


def bin_dir() -> Path:
    return Path(os.environ.get("LOOM_MLIR_BIN", DEFAULT_BIN))


def lib_dir() -> Path:
    override = os.environ.get("LOOM_MLIR_LIB")
    return Path(override) if override else bin_dir().parent / "lib"


def tool_path(name: str) -> Path:
    return bin_dir() / name


def _find_lib(stem: str) -> Path | None:
    """The runner library ``stem`` (``libX.so``), preferring a versioned file
    (``libX.so.22.1``), which is what the Debian package ships without -dev."""
    folder = lib_dir()
    if not folder.is_dir():
        return None
    candidates = sorted(folder.glob(stem + "*"), key=lambda p: (len(p.name), p.name))
    versioned = [p for p in candidates if p.name != stem]
    chosen = versioned[-1:] or candidates[:1]
    return chosen[0] if chosen else None


def runner_libs() -> list[Path]:
    libs = [_find_lib(stem) for stem in RUNNER_LIBS]
    missing = [stem for stem, lib in zip(RUNNER_LIBS, libs) if lib is None]
    if missing:
        raise LoomError(
            f"MLIR runner libraries {missing} not found in {lib_dir()} "
            "(install mlir-22-tools or set LOOM_MLIR_LIB)",
            where="mlir-runner",
        )
    return [lib for lib in libs if lib is not None]


def available() -> bool:
    """True when mlir-opt, mlir-runner and the runner libraries are all present."""
    tools_ok = all(os.access(tool_path(t), os.X_OK) for t in ("mlir-opt", "mlir-runner"))
    return tools_ok and all(_find_lib(stem) is not None for stem in RUNNER_LIBS)


def _timeout() -> float:
    try:
        return float(os.environ.get("LOOM_MLIR_TIMEOUT", "300"))
    except ValueError:
        raise LoomError("LOOM_MLIR_TIMEOUT must be a number of seconds", where="environment")


def _clip(text: str) -> str:
    text = text.strip()
    if len(text) > MAX_STDERR:
        return text[:MAX_STDERR] + f"\n... ({len(text) - MAX_STDERR} more characters)"
    return text


def _tool_env() -> dict[str, str]:
    """The environment minus LD_PRELOAD: the sanitizer session preloads ASan
    into Python for sanitized kernels; the MLIR tools are not instrumented and
    only get slower with it."""
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)
    return env


def invoke(tool: str, args: list[str], stdin_text: str) -> str:
    """Run ``tool`` with ``args`` feeding ``stdin_text``; return its stdout.

    Any failure (missing tool, non-zero exit, crash, timeout) becomes a
    LoomError that quotes the tool's stderr."""
    path = tool_path(tool)
    if not os.access(path, os.X_OK):
        raise LoomError(
            f"{path} not found (install the Debian package mlir-22-tools or set LOOM_MLIR_BIN)",
            where=tool,
        )
    try:
        proc = subprocess.run(
            [str(path), *args],
            input=stdin_text,
            capture_output=True,
            text=True,
            timeout=_timeout(),
            env=_tool_env(),
        )
    except subprocess.TimeoutExpired:
        raise LoomError(f"timed out after {_timeout():g} s (LOOM_MLIR_TIMEOUT)", where=tool) from None
    if proc.returncode != 0:
        how = (
            f"was killed by signal {-proc.returncode}"
            if proc.returncode < 0
            else f"exited with status {proc.returncode}"
        )
        raise LoomError(f"{how}:\n{_clip(proc.stderr)}", where=tool)
    return proc.stdout
