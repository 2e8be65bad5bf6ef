"""loom's passes and the registry that makes them available by name.

Every pass is an xDSL ``ModulePass`` in its own file. ``available_passes()``
merges xDSL's passes with ours (ours win on a name clash: loom's
``convert-linalg-to-loops`` and ``linalg-generalize-named-ops`` wrap xDSL's to fix
its ``linalg.pooling_nchw_max`` body); other parts of loom add theirs with
``register_pass``.
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.passes import ModulePass


def _ours() -> dict[str, Callable[[], type[ModulePass]]]:
    def tile():
        from loom.passes.scf_tile_and_interchange import ScfTileAndInterchangePass
        return ScfTileAndInterchangePass

    def interchange():
        from loom.passes.scf_loop_interchange import ScfLoopInterchangePass
        return ScfLoopInterchangePass

    def pooling():
        from loom.passes.linalg_generalize_pooling import LinalgGeneralizePoolingPass
        return LinalgGeneralizePoolingPass

    def allocas():
        from loom.passes.remove_dead_allocas import RemoveDeadAllocasPass
        return RemoveDeadAllocasPass

    def loops():
        from loom.passes.convert_linalg_to_loops import ConvertLinalgToLoopsPass
        return ConvertLinalgToLoopsPass

    def generalize():
        from loom.passes.linalg_generalize_named_ops import LinalgGeneralizeNamedOpsPass
        return LinalgGeneralizeNamedOpsPass

    return {
        # These two replace xDSL's passes of the same name (pooling fix).
        "convert-linalg-to-loops": loops,
        "linalg-generalize-named-ops": generalize,
        "scf-tile-and-interchange": tile,
        "scf-loop-interchange": interchange,
        "loom-linalg-generalize-pooling": pooling,
        "loom-remove-dead-allocas": allocas,
    }


LOOM_PASSES: dict[str, Callable[[], type[ModulePass]]] = _ours()


def register_pass(pass_class: type[ModulePass]) -> type[ModulePass]:
    """Make ``pass_class`` available by its ``name`` (usable as a decorator)."""
    LOOM_PASSES[pass_class.name] = lambda: pass_class
    return pass_class


def available_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    """Name -> loader of the pass class, xDSL's and loom's."""
    from xdsl.transforms import get_all_passes

    return {**get_all_passes(), **LOOM_PASSES}


from loom.passes.pipeline import Pipeline  # noqa: E402
from loom.passes.recipes import lower_to_c, lower_to_loops  # noqa: E402

__all__ = ["Pipeline", "available_passes", "register_pass", "lower_to_c", "lower_to_loops", "LOOM_PASSES"]
