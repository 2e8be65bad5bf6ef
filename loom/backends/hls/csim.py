"""Compile and run a C-simulation testbench with the host C++ compiler and loom's HLS header.

``$CXX`` (default ``g++``) with ``-std=c++17 -Wall -Wextra -Werror``: generated code that warns is a
bug. ``LOOM_SANITIZE=1`` (or ``sanitize=True``) builds with ASan/UBSan. The environment's
``LD_PRELOAD`` (the test runner preloads sanitizer runtimes into Python) is not passed on.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from loom.errors import LoomError

INCLUDE_DIR = Path(__file__).resolve().parent / "include"
HEADERS = ("loom_hls.h", "ap_int.h", "ap_fixed.h", "hls_stream.h")
FLOAT_HEADER = "loom_float.h"  # loom's custom float formats (HlsFloat), written when a kernel uses one
WARNINGS = ["-std=c++17", "-Wall", "-Wextra", "-Werror"]
SANITIZE = ["-O1", "-g", "-fno-omit-frame-pointer", "-fsanitize=address,undefined", "-fno-sanitize-recover=all"]


def cxx() -> list[str]:
    return shlex.split(os.environ.get("CXX", "").strip()) or ["g++"]


def _environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
    env.setdefault("ASAN_OPTIONS", "detect_leaks=1")
    return env


@dataclass
class CsimRun:
    arrays: dict[str, np.ndarray]  # written arrays, by port name
    results: list  # returned scalars
    stdout: str
    folder: Path  # where the sources and the executable are


def compile_and_run(program, testbench: str, *, sanitize: bool | None = None, folder: str | Path | None = None,
                    timeout: float = 120.0, compile_timeout: float = 300.0) -> CsimRun:
    """Write ``NAME.cpp`` and ``NAME_tb.cpp`` to ``folder`` (a temporary one by default), build, run, parse.
    ``timeout``: seconds the C simulation may run; ``compile_timeout``: seconds g++ may take."""
    from loom.backends.hls.testbench import parse_output

    if sanitize is None:
        sanitize = os.environ.get("LOOM_SANITIZE", "") not in ("", "0")
    work = Path(folder) if folder is not None else Path(tempfile.mkdtemp(prefix="loom-hls-"))
    work.mkdir(parents=True, exist_ok=True)
    kernel, bench, exe = work / f"{program.top}.cpp", work / f"{program.top}_tb.cpp", work / f"{program.top}_csim"
    kernel.write_text(program.source)
    bench.write_text(testbench)
    flags = WARNINGS + (SANITIZE if sanitize else ["-O1"])
    command = [*cxx(), *flags, "-I", str(INCLUDE_DIR), str(kernel), str(bench), "-o", str(exe)]
    try:
        built = subprocess.run(command, capture_output=True, text=True, timeout=compile_timeout,
                               env=_environment())
    except (OSError, subprocess.TimeoutExpired) as error:
        raise LoomError(f"cannot run the C++ compiler {cxx()[0]}: {error}") from None
    if built.returncode != 0:
        raise LoomError(f"the HLS C++ of {program.top} does not compile with {' '.join(cxx() + WARNINGS)}:\n"
                        + "\n".join(built.stderr.splitlines()[:30]), filename=str(kernel))
    try:
        ran = subprocess.run([str(exe)], capture_output=True, text=True, timeout=timeout, env=_environment())
    except subprocess.TimeoutExpired:
        raise LoomError(f"the C simulation of {program.top} did not finish in {timeout:g} s (a loop whose trip "
                        "count depends on the inputs may not end on the testbench's values: choose them with "
                        "ranges={...} or loom hls --range NAME=LO:HI)") from None
    if ran.returncode != 0:
        raise LoomError(f"the C simulation of {program.top} failed (exit {ran.returncode}):\n"
                        + "\n".join(ran.stderr.splitlines()[:30]), filename=str(bench))
    arrays, results = parse_output(program, ran.stdout)
    return CsimRun(arrays, results, ran.stdout, work)


def write_headers(folder: str | Path, floats: bool = False) -> list[Path]:
    """Copy loom's HLS headers into ``folder`` (next to generated code that is shipped); ``floats``: also
    loom_float.h (a kernel computing in a custom float format includes it)."""
    out = []
    for name in HEADERS + ((FLOAT_HEADER,) if floats else ()):
        target = Path(folder) / name
        target.write_text((INCLUDE_DIR / name).read_text())
        out.append(target)
    return out
