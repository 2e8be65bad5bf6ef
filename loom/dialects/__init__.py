"""loom's own xDSL dialects, and the one context that knows every dialect loom reads.

- ``accel`` (``loom.dialects.accel``): host-side accelerator transactions (AXI4MLIR).
- ``base2`` (``loom.dialects.base2``): custom number formats (fixed point, custom floats) and their
  arithmetic (lowered by ``lower-base2-to-arith``).
- ``dfg`` (``loom.dialects.dfg``): Kahn-process-network dataflow graphs (nodes, bounded channels).
- ``esn`` (``loom.dialects.esn``): Einstein-notation expressions (the EKL frontend's IR).
- ``olympus`` (``loom.dialects.olympus``): system-level kernels, channels and memory pseudo-channels.
- ``ubuf`` (``loom.dialects.ubuf``): unified buffers of streaming designs (ports with
  iteration domain, access map and cycle schedule; kernels; constants).

``LOOM_DIALECTS`` maps each name to a loader (the modules are imported only when a
dialect is first used; importing the package itself loads xDSL's builder, whose op-creation
hook ``implicit_builder`` installs once so threads can build IR). ``context()`` is
the context every loom entry point parses and runs passes with: xDSL's dialects,
other installed xDSL plugins' dialects and loom's. Unregistered ops are an error
there unless asked for, so a misspelt or unknown op never passes through silently.
The same loaders are published to ``xdsl-opt`` through the ``xdsl.universe`` entry
point (``loom.universe``).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache

from xdsl.context import Context
from xdsl.ir import Dialect

from loom.dialects import implicit_builder  # noqa: F401 - op creation hooked once, before any thread builds IR


def _accel() -> Dialect:
    from loom.dialects.accel import Accel

    return Accel


def _base2() -> Dialect:
    from loom.dialects.base2 import Base2

    return Base2


def _dfg() -> Dialect:
    from loom.dialects.dfg import Dfg

    return Dfg


def _olympus() -> Dialect:
    from loom.dialects.olympus import Olympus

    return Olympus


def _ubuf() -> Dialect:
    from loom.dialects.ubuf import Ubuf

    return Ubuf


def _esn() -> Dialect:
    from loom.dialects.esn import Esn

    return Esn


LOOM_DIALECTS: dict[str, Callable[[], Dialect]] = {"accel": _accel, "ubuf": _ubuf, "dfg": _dfg, "olympus": _olympus,
                                                   "esn": _esn, "base2": _base2}


def context(allow_unregistered: bool = False) -> Context:
    """A fresh context with every xDSL dialect, every installed plugin's dialects and loom's."""
    from loom.dialects.arith_remf import RemFOp

    ctx = Context(allow_unregistered=allow_unregistered)
    for name, loader in _all_dialects().items():
        ctx.register_dialect(name, loader)
    ctx.load_op(RemFOp)  # an arith op xDSL's arith lacks: the kernel frontend emits it, stage files print it
    return ctx


@cache
def _all_dialects() -> dict[str, Callable[[], Dialect]]:
    """Name -> loader; the installed plugins are scanned once per process (the scan costs ~30 ms)."""
    from xdsl.universe import Universe

    dialects = dict(Universe.get_multiverse().all_dialects)
    dialects.update(LOOM_DIALECTS)  # also when loom runs from a checkout without its entry point
    return dialects


__all__ = ["LOOM_DIALECTS", "context"]
