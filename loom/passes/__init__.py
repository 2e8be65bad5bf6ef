"""loom's passes and the registry that makes them available by name.

Every pass is an xDSL ``ModulePass`` in its own file. ``available_passes()``
merges xDSL's passes with ours (ours win on a name clash: loom's
``convert-linalg-to-loops`` and ``linalg-generalize-named-ops`` wrap xDSL's to fix
its ``linalg.pooling_nchw_max`` body); other parts of loom add theirs with
``register_pass``.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

from xdsl.passes import ModulePass


# name -> (module, class); imported only when the pass is used, so that
# ``import loom.passes`` stays cheap.
_OURS = {
    # These two replace xDSL's passes of the same name (pooling fix).
    "convert-linalg-to-loops": ("convert_linalg_to_loops", "ConvertLinalgToLoopsPass"),
    "linalg-generalize-named-ops": ("linalg_generalize_named_ops", "LinalgGeneralizeNamedOpsPass"),
    "scf-tile-and-interchange": ("scf_tile_and_interchange", "ScfTileAndInterchangePass"),
    "scf-loop-interchange": ("scf_loop_interchange", "ScfLoopInterchangePass"),
    "loom-linalg-generalize-pooling": ("linalg_generalize_pooling", "LinalgGeneralizePoolingPass"),
    "loom-remove-dead-allocas": ("remove_dead_allocas", "RemoveDeadAllocasPass"),
    # accelerator host-driver generation (AXI4MLIR)
    "convert-linalg-to-accel": ("convert_linalg_to_accel", "ConvertLinalgToAccelPass"),
    "accel-tile": ("accel_tile", "AccelTilePass"),
    "accel-place-flow": ("accel_place_flow", "AccelPlaceFlowPass"),
    "convert-accel-to-runtime": ("convert_accel_to_runtime", "ConvertAccelToRuntimePass"),
}


def _loader(module: str, cls: str) -> Callable[[], type[ModulePass]]:
    def load() -> type[ModulePass]:
        return getattr(importlib.import_module(f"loom.passes.{module}"), cls)

    return load


LOOM_PASSES: dict[str, Callable[[], type[ModulePass]]] = {n: _loader(*where) for n, where in _OURS.items()}


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
