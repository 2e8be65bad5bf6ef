"""xDSL 0.74's implicit builder, made safe to use from several threads at once (``loom build --threads``).

xDSL keeps the implicit builder per thread but hooks op creation for the whole process: the outermost
``ImplicitBuilder`` of a thread wraps ``Operation.__post_init__`` and puts the saved one back on exit. Two
threads doing that at once stack two wrappers (each op is inserted twice: "Can't add to a block an operation
already attached to a block"), or one unhooks the other mid-build (its ops land nowhere), and the wrapper saved
last can stay installed for good. Here the hook is installed once and stays: it reads only the calling thread's
builder, and xDSL's per-builder swap becomes a no-op. Cost: one thread-local read per op created outside a builder.
"""

from __future__ import annotations

import threading

from xdsl import builder as _xdsl_builder
from xdsl.ir import Operation

_LOCK = threading.Lock()
_XDSL_WRAPPER = "_override_operation_post_init.<locals>.new_post_init"


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
        _xdsl_builder._override_operation_post_init = hook
        hook()


install()
