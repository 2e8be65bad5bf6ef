"""Import a user's Python file and run its code, turning every failure into a located LoomError.

Users hand loom files of their own (kernels, graphs, pipelines, accelerator
models). Whatever goes wrong while importing or calling into them is reported as
one ``file:line: <what> while <doing>`` message (the innermost frame in their
file), never as a traceback from inside loom.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

from loom.errors import LoomError


def is_file(path: str | Path) -> bool:
    """``Path.is_file`` that is False, not an OSError/ValueError, for names the system cannot look up (longer
    than NAME_MAX, a NUL byte): a user's typo is a missing file."""
    try:
        return Path(path).is_file()
    except (OSError, ValueError):
        return False


def is_dir(path: str | Path) -> bool:
    try:
        return Path(path).is_dir()
    except (OSError, ValueError):
        return False


def import_user_file(path: str | Path, module_name: str | None = None) -> ModuleType:
    """The module of the Python file ``path``, registered in ``sys.modules`` (dataclasses and
    pickling need that) under ``module_name`` (default ``loom_user_<stem>``)."""
    path = Path(path)
    if not is_file(path):
        raise LoomError("cannot read: no such file", filename=str(path))
    name = module_name or f"loom_user_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise LoomError("cannot load this Python file", filename=str(path))
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        run_user_code(lambda: spec.loader.exec_module(module), path, "importing it")
    except LoomError:
        sys.modules.pop(name, None)
        raise
    return module


def run_user_code(fn, path: str | Path, doing: str):
    """``fn()`` (code from the user's file ``path``); its exceptions become a LoomError at the line of
    the innermost frame in that file. LoomErrors pass through unchanged."""
    try:
        return fn()
    except LoomError:
        raise
    except SyntaxError as error:
        raise LoomError(f"syntax error: {error.msg}", filename=str(path), line=error.lineno) from None
    except Exception as error:  # noqa: BLE001 - user code may raise anything
        raise LoomError(f"{type(error).__name__} while {doing}: {error}", filename=str(path),
                        line=_innermost_line(error, Path(path))) from None


def _innermost_line(error: BaseException, path: Path) -> int | None:
    line, target = None, path.resolve()
    tb = error.__traceback__
    while tb is not None:
        if Path(tb.tb_frame.f_code.co_filename).resolve() == target:
            line = tb.tb_lineno
        tb = tb.tb_next
    return line
