"""Ready-made lowerings from what the frontends emit to what the backends take.

``lower_to_loops``: linalg ops (named and generic) -> ``scf.for`` nests of
``memref.load``/``store`` and scalar arith/math (plus ``affine.apply`` for
strided/dilated indices). ``lower_to_c``: that, cleaned up, checked to contain
only func/scf/affine/memref/arith/math (what the C backend accepts).
Both return a lowered clone; the input module is not modified.
"""

from __future__ import annotations

from functools import cache

from xdsl.dialects.builtin import ModuleOp

from loom.errors import LoomError
from loom.passes.pipeline import DumpCallback, Pipeline



@cache
def loops_pipeline() -> Pipeline:
    """loom's convert-linalg-to-loops (it fixes xDSL's pooling body); pooling windows die after it.
    Built on first use: parsing looks passes up in the plugin registry, which imports loom.passes."""
    return Pipeline.parse("loom-convert-linalg-to-loops,loom-remove-dead-allocas")


@cache
def c_pipeline(keep_types: tuple[str, ...] = ()) -> Pipeline:
    """``keep_types``: ops on values of these types are not folded (see ``loom-canonicalize``)."""
    keep = f"{{keep-types={','.join(keep_types)}}}" if keep_types else ""
    return loops_pipeline().then(Pipeline.parse(f"loom-canonicalize{keep},loom-cse"))

C_DIALECTS = ("builtin", "func", "scf", "affine", "memref", "arith", "math")


def lower_to_loops(module: ModuleOp, dump: DumpCallback | None = None) -> ModuleOp:
    """A clone of ``module`` with every linalg op turned into loops."""
    return loops_pipeline().run_clone(module, dump=dump)


def lower_to_c(module: ModuleOp, dump: DumpCallback | None = None, keep_types: tuple[str, ...] = ()) -> ModuleOp:
    """A clone of ``module`` lowered to func/scf/affine/memref/arith/math only (``keep_types``: see
    ``c_pipeline``)."""
    lowered = c_pipeline(keep_types).run_clone(module, dump=dump)
    leftovers = sorted({op.name for op in lowered.walk() if op.name.split(".")[0] not in C_DIALECTS})
    if leftovers:
        hint = ("; base2 ops are lowered by lower-base2-to-arith first (loom.jit.formats.compile_base2 runs it)"
                if any(name.startswith("base2.") for name in leftovers) else "")
        raise LoomError(
            f"lower_to_c: cannot lower {', '.join(leftovers)} to "
            f"{'/'.join(C_DIALECTS[1:])}{hint}"
        )
    return lowered
