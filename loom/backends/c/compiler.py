"""C source -> shared object, cached on disk by content hash.

Key = sha256(source, flags, compiler identity). Objects land in
``$LOOM_CACHE_DIR`` or ``~/.cache/loom`` next to their C file; both are written
to a temporary name and renamed, so concurrent workers never see half a file.
"""

from __future__ import annotations

import hashlib
import os
import pathlib
import shlex
import subprocess
import tempfile
from collections.abc import Sequence

from loom.errors import LoomError

BASE_FLAGS = ["-std=c99", "-O3", "-fPIC", "-shared"]
SANITIZE_FLAGS = [
    "-std=c99", "-O1", "-g", "-fPIC", "-shared", "-fno-omit-frame-pointer",
    "-fsanitize=address,undefined", "-fno-sanitize-recover=undefined",
]
_IDENTITY: dict[str, str] = {}


def compiler() -> str:
    return os.environ.get("CC") or "cc"


def sanitize_requested(sanitize: bool | None) -> bool:
    if sanitize is None:
        return os.environ.get("LOOM_SANITIZE", "") == "1"
    return sanitize


def compile_flags(sanitize: bool) -> list[str]:
    flags = list(SANITIZE_FLAGS if sanitize else BASE_FLAGS)
    flags += shlex.split(os.environ.get("LOOM_CFLAGS", ""))
    return flags


def cache_dir() -> pathlib.Path:
    root = os.environ.get("LOOM_CACHE_DIR")
    path = pathlib.Path(root) if root else pathlib.Path.home() / ".cache" / "loom"
    path.mkdir(parents=True, exist_ok=True)
    return path


def compiler_identity(cc: str) -> str:
    """``cc --version`` (once per process): a compiler upgrade invalidates the cache."""
    if cc not in _IDENTITY:
        try:
            out = subprocess.run([cc, "--version"], capture_output=True, text=True, timeout=60)
        except (OSError, subprocess.TimeoutExpired) as err:
            raise LoomError(f"C compiler '{cc}' cannot be run: {err}", where="$CC") from None
        _IDENTITY[cc] = out.stdout + out.stderr
    return _IDENTITY[cc]


def cache_key(source: str, cc: str, flags: list[str]) -> str:
    h = hashlib.sha256()
    for part in (source, "\0", cc, "\0", " ".join(flags), "\0", compiler_identity(cc)):
        h.update(part.encode())
    return h.hexdigest()


def _write_atomic(path: pathlib.Path, data: str) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name + ".", suffix=".tmp")
    with os.fdopen(fd, "w") as f:
        f.write(data)
    os.replace(tmp, path)


def build_shared_object(source: str, sanitize: bool, extra_flags: Sequence[str] = ()) -> pathlib.Path:
    """Path of the shared object for ``source``, compiling it on a cache miss.

    ``extra_flags`` go after the C file (extra sources, ``-L``/``-l`` for a runtime
    library); they are part of the cache key but not the contents they name.
    """
    cc = compiler()
    flags = compile_flags(sanitize)
    key = cache_key(source, cc, flags + ["--"] + list(extra_flags))
    directory = cache_dir()
    so_path = directory / f"{key}.so"
    c_path = directory / f"{key}.c"
    if so_path.exists():
        return so_path
    _write_atomic(c_path, source)
    fd, tmp_so = tempfile.mkstemp(dir=directory, prefix=f"{key}.", suffix=".so.tmp")
    os.close(fd)
    cmd = [cc, *flags, str(c_path), *extra_flags, "-o", tmp_so, "-lm"]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    except (OSError, subprocess.TimeoutExpired) as err:
        os.unlink(tmp_so)
        raise LoomError(f"C compiler '{cc}' failed to run: {err}", filename=str(c_path)) from None
    if proc.returncode != 0:
        os.unlink(tmp_so)
        raise LoomError(
            f"C compilation failed ({' '.join(cmd)}):\n{proc.stderr.strip()}", filename=str(c_path)
        )
    os.replace(tmp_so, so_path)
    return so_path
