"""Which Python functions a kernel may call as helpers (inlined by ``inline``): the user's own plain ``def``s."""

from __future__ import annotations

import sysconfig
import types
from functools import cache
from pathlib import Path


@cache
def _library_roots() -> tuple[Path, ...]:
    paths = sysconfig.get_paths()
    return tuple({Path(paths[k]).resolve() for k in ("stdlib", "platstdlib", "purelib", "platlib") if k in paths})


def is_user_function(fobj) -> bool:
    """A plain ``def`` from the user's own code (not a library's, not loom's, not a lambda)."""
    if not isinstance(fobj, types.FunctionType) or fobj.__code__.co_name == "<lambda>":
        return False
    module = getattr(fobj, "__module__", "") or ""
    if module == "loom" or module.startswith("loom."):
        return False
    try:
        path = Path(fobj.__code__.co_filename).resolve()
    except (OSError, RuntimeError):
        return False
    return not any(path.is_relative_to(root) for root in _library_roots())
