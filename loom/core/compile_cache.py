"""The one on-disk cache of compiled C: source files -> verified shared object.

Used by the C backend (kernels, drivers) and by the runtime library build.

- Directory: ``$LOOM_CACHE_DIR`` or ``~/.cache/loom``.
- Compiler: ``$CC`` (split like a shell word list, so ``CC="ccache gcc"`` works)
  or ``cc``; its ``--version`` text is part of the key, so a compiler upgrade
  invalidates the cache.
- Flags: the caller's flags, then ``$CFLAGS`` then ``$LOOM_CFLAGS`` (an older
  alias kept for existing setups); all of them are part of the key. The C
  standard is a parameter (kernels are C99, the runtime C11), not a second cache.
- Key: sha256 of the C text / every source and header file (name and bytes),
  the flags, the trailing link arguments and the compiler identity.
- Writes: every file goes to a temporary name in the cache directory and is
  renamed, so readers see a whole old file or a whole new one. Next to each
  object ``<key>.so`` lies ``<key>.so.sha256``, written after the object; an
  object whose checksum is missing or wrong (a truncated file would otherwise
  crash the process with SIGBUS when dlopen'ed) is rebuilt and replaced by
  rename, never unlinked, so a concurrent reader never loses its path.
- Failures (unusable cache directory, no or broken compiler, compile errors,
  a full disk) are ``LoomError`` naming what to fix.
"""

from __future__ import annotations

import hashlib
import os
import shlex
import subprocess
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

from loom.errors import LoomError

CHECKSUM_SUFFIX = ".sha256"
_IDENTITY: dict[tuple[str, ...], str] = {}


def compiler() -> list[str]:
    """The C compiler command (``$CC`` or ``cc``) as an argument list."""
    words = shlex.split(os.environ.get("CC", "").strip())
    return words or ["cc"]


def user_cflags() -> list[str]:
    """Flags from the environment, appended after loom's own: ``$CFLAGS`` then ``$LOOM_CFLAGS``."""
    return shlex.split(os.environ.get("CFLAGS", "")) + shlex.split(os.environ.get("LOOM_CFLAGS", ""))


def cache_dir() -> Path:
    """The cache directory, created if needed; LoomError if it cannot be used."""
    root = os.environ.get("LOOM_CACHE_DIR")
    path = Path(root) if root else Path.home() / ".cache" / "loom"
    where = "$LOOM_CACHE_DIR" if root else "~/.cache/loom"
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise LoomError(f"cache directory {path} cannot be created ({err.strerror or err}); "
                        "point LOOM_CACHE_DIR at a writable directory", where=where) from None
    if not os.access(path, os.W_OK | os.X_OK):
        raise LoomError(f"cache directory {path} is not writable; point LOOM_CACHE_DIR at a writable "
                        "directory", where=where)
    return path


def compiler_identity(cc: Sequence[str]) -> str:
    """``cc --version`` (once per process and compiler); LoomError if the compiler does not run."""
    key = tuple(cc)
    if key not in _IDENTITY:
        try:
            out = subprocess.run([*cc, "--version"], capture_output=True, text=True, timeout=60)
        except (OSError, subprocess.TimeoutExpired) as err:
            raise LoomError(f"C compiler '{' '.join(cc)}' cannot be run: {err}; set CC to a working C "
                            "compiler (gcc or clang)", where="$CC") from None
        if out.returncode != 0:
            raise LoomError(f"C compiler '{' '.join(cc)}' does not work: '--version' exited with "
                            f"{out.returncode} {out.stderr.strip()[:200]}; set CC to a working C compiler",
                            where="$CC")
        _IDENTITY[key] = out.stdout + out.stderr
    return _IDENTITY[key]


def file_digest(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _temp_file(directory: Path, name: str) -> tuple[int, str]:
    """A new temporary file next to its final ``name`` (tests substitute a full disk)."""
    return tempfile.mkstemp(dir=directory, prefix=name + ".", suffix=".tmp")


def _fs_error(err: OSError, path: Path) -> LoomError:
    return LoomError(f"cannot write the compile cache ({err.strerror or err}): {path}; free disk space or "
                     "point LOOM_CACHE_DIR at a writable directory", where="$LOOM_CACHE_DIR")


def write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file and a rename."""
    try:
        fd, tmp = _temp_file(path.parent, path.name)
    except OSError as err:
        raise _fs_error(err, path) from None
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except OSError as err:
        _unlink_quietly(tmp)
        raise _fs_error(err, path) from None


def _unlink_quietly(path: str | Path) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def verified(obj: Path) -> bool:
    """True if ``obj`` exists and its bytes match the checksum stored next to it."""
    sidecar = obj.with_name(obj.name + CHECKSUM_SUFFIX)
    try:
        expected = sidecar.read_text().strip()
        return bool(expected) and file_digest(obj) == expected
    except OSError:
        return False


def shared_object(
    *,
    std: str,
    flags: Sequence[str],
    c_source: str | None = None,
    files: Sequence[Path] = (),
    depends: Sequence[Path] = (),
    trailing: Sequence[str] = (),
    stem: str = "",
) -> Path:
    """Path of the shared object built from ``c_source`` and/or ``files``; compiled on a miss.

    Command: ``$CC -std=<std> <flags> $CFLAGS $LOOM_CFLAGS <c file> <files> <trailing> -o <obj> -lm``.
    ``depends`` (headers) and ``files`` enter the key by content; ``trailing`` (extra sources,
    ``-L``/``-l`` of a runtime library) enters by text. ``c_source`` is kept as ``<key>.c`` next
    to the object, so compiler messages point at a file that exists.
    """
    cc = compiler()
    all_flags = [f"-std={std}", *flags, *user_cflags()]
    h = hashlib.sha256()
    for part in (c_source or "", cc, all_flags, list(trailing), compiler_identity(cc)):
        h.update(repr(part).encode() + b"\0")
    for path in [*depends, *files]:
        h.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    key = stem + h.hexdigest()[: 40 if stem else 64]
    directory = cache_dir()
    c_path = directory / f"{key}.c"
    inputs = [str(p) for p in files]
    if c_source is not None and not verified(directory / f"{key}.so"):
        write_atomic(c_path, c_source.encode())
        inputs.insert(0, str(c_path))

    def compile_to(tmp: Path) -> None:
        cmd = [*cc, *all_flags, *inputs, *trailing, "-o", str(tmp), "-lm"]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        except (OSError, subprocess.TimeoutExpired) as err:
            raise LoomError(f"C compiler '{' '.join(cc)}' failed to run: {err}", where="$CC") from None
        if proc.returncode != 0:
            where = {"filename": str(c_path)} if c_source is not None else {"where": " ".join(cmd)}
            raise LoomError(f"C compilation failed (exit {proc.returncode}: {' '.join(cmd)}):\n"
                            f"{proc.stderr.strip()}", **where)

    return cached_object(key, compile_to)


def cached_object(key: str, build: Callable[[Path], None], suffix: str = ".so") -> Path:
    """Path of the verified cache entry ``<key><suffix>``; on a miss ``build(tmp)`` writes it.

    ``build`` writes the object to the temporary path it is given (next to the final name) and
    raises a ``LoomError`` on failure; the object is then checksummed and renamed into place, so
    every builder (C objects here, Verilated RTL models in ``loom.runtime.rtl``) shares one
    atomic, verified cache."""
    directory = cache_dir()
    obj = directory / f"{key}{suffix}"
    if verified(obj):
        return obj
    try:
        fd, tmp = _temp_file(directory, obj.name)
        os.close(fd)
    except OSError as err:
        raise _fs_error(err, obj) from None
    try:
        build(Path(tmp))
    except BaseException:
        _unlink_quietly(tmp)
        raise
    try:
        digest = file_digest(Path(tmp))
        os.chmod(tmp, 0o755)
        os.replace(tmp, obj)  # atomic: readers see the old or the whole new object
    except OSError as err:
        _unlink_quietly(tmp)
        raise _fs_error(err, obj) from None
    write_atomic(obj.with_name(obj.name + CHECKSUM_SUFFIX), (digest + "\n").encode())
    return obj
