"""xDSL 0.74's implicit builder, made safe to use from several threads at once (``loom build --threads``).

xDSL keeps the implicit builder per thread but hooks op creation for the whole process: the outermost
``ImplicitBuilder`` of a thread wraps ``Operation.__post_init__`` and puts the saved one back on exit. Two
threads doing that at once stack two wrappers (each op is inserted twice: "Can't add to a block an operation
already attached to a block"), or one unhooks the other mid-build (its ops land nowhere), and the wrapper saved
last can stay installed for good. Here the hook is installed once and stays: it reads only the calling thread's
builder, and xDSL's per-builder swap becomes a no-op. Cost: one thread-local read per op created outside a builder.
Written for xDSL 0.74.0 (pyproject pins it): ``check_xdsl`` refuses, naming the installed version, an xDSL whose
builder internals differ, before anything is replaced.
"""

from __future__ import annotations

import threading
from importlib.metadata import PackageNotFoundError, version

from xdsl import builder as _xdsl_builder
from xdsl.ir import Operation

from loom.errors import LoomError

_LOCK = threading.Lock()
_XDSL_WRAPPER = "_override_operation_post_init.<locals>.new_post_init"
WRITTEN_FOR = "0.74.0"  # the xDSL whose builder internals this module replaces (pyproject pins it)


def xdsl_version() -> str:
    try:
        return version("xdsl")
    except PackageNotFoundError:
        return "(unknown version)"


def check_xdsl(builder=_xdsl_builder) -> None:
    """Refuse, naming the xDSL version, an xDSL whose builder internals differ from those replaced here
    (another xDSL could call the hook by another name, or keep builders process-wide, and ops would land
    twice or nowhere without a word)."""
    problems = []
    current = getattr(builder, "_current_builder", None)
    if not isinstance(current, threading.local):
        problems.append("xdsl.builder._current_builder is not a threading.local (builders per thread)")
    callback = getattr(builder, "_op_init_callback", None)
    if not callable(callback) or set(callback.__code__.co_names) != {"_current_builder", "builder", "insert"}:
        problems.append("xdsl.builder._op_init_callback no longer only inserts into the thread's builder")
    override = getattr(builder, "_override_operation_post_init", None)
    if override is None or (not getattr(override, "_loom_hook", False) and _XDSL_WRAPPER not in
                            [c.co_qualname for c in override.__code__.co_consts if hasattr(c, "co_qualname")]):
        problems.append(f"xdsl.builder._override_operation_post_init no longer wraps __post_init__ in {_XDSL_WRAPPER}")
    implicit = getattr(getattr(builder, "ImplicitBuilder", None), "__wrapped__", None)
    names = set(getattr(getattr(implicit, "__code__", None), "co_names", ()))
    if not {"_override_operation_post_init", "_current_builder", "__post_init__"} <= names:
        problems.append("xdsl.builder.ImplicitBuilder no longer hooks op creation through "
                        "_override_operation_post_init and restores Operation.__post_init__")
    if problems:
        raise LoomError(f"loom.dialects.implicit_builder replaces xDSL {WRITTEN_FOR}'s implicit-builder hook, but "
                        f"the installed xDSL {xdsl_version()} differs: " + "; ".join(problems) +
                        f"; install xdsl=={WRITTEN_FOR} or port the hook", where="loom.dialects.implicit_builder")


def _unwrapped(post_init):
    """``post_init`` without xDSL's wrappers (a thread may be inside an ImplicitBuilder while we install)."""
    while post_init.__qualname__ == _XDSL_WRAPPER:
        (cell,) = post_init.__closure__  # the wrapper closes over the function it wraps, only
        post_init = cell.cell_contents
    return post_init


def install() -> None:
    """Hook op creation to the calling thread's implicit builder, once per process (idempotent)."""
    with _LOCK:
        if getattr(Operation.__post_init__, "_loom_thread_safe", False):
            return
        check_xdsl()
        original = _unwrapped(Operation.__post_init__)
        insert = _xdsl_builder._op_init_callback  # no-op when the thread has no builder

        def post_init(op: Operation) -> None:
            original(op)
            insert(op)

        def hook() -> object:
            # ImplicitBuilder calls this on entry and restores what it returns on exit: the hook both times
            Operation.__post_init__ = post_init  # type: ignore[method-assign]
            return post_init

        post_init._loom_thread_safe = True  # type: ignore[attr-defined]
        hook._loom_hook = True  # type: ignore[attr-defined]
        _xdsl_builder._override_operation_post_init = hook
        hook()


install()
