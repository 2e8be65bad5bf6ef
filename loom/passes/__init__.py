"""loom's passes and the registry that makes them available by name.

Every pass is an xDSL ``ModulePass`` in its own file, listed once in ``LOOM_PASSES``
below (name -> lazy loader). The same table is published to ``xdsl-opt`` through
the ``xdsl.universe`` entry point (``loom.universe``), so a fresh process sees every
loom pass by name without importing anything first.

``available_passes()`` merges xDSL's passes with ours and the ``ALIASES``: inside
loom, ``convert-linalg-to-loops`` and ``linalg-generalize-named-ops`` mean loom's
versions (``loom-...``), which wrap xDSL's to fix its ``linalg.pooling_nchw_max``
body. Users add their own passes with ``register_pass``.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from functools import cache

from xdsl.passes import ModulePass


# name -> (module, class); imported only when the pass is used, so that
# ``import loom.passes`` stays cheap.
BUILTIN_PASSES = {
    # xDSL's passes with the pooling fix (``ALIASES`` give them xDSL's names inside loom)
    "loom-convert-linalg-to-loops": ("convert_linalg_to_loops", "ConvertLinalgToLoopsPass"),
    "loom-linalg-generalize-named-ops": ("linalg_generalize_named_ops", "LinalgGeneralizeNamedOpsPass"),
    "scf-tile-and-interchange": ("scf_tile_and_interchange", "ScfTileAndInterchangePass"),
    "scf-loop-interchange": ("scf_loop_interchange", "ScfLoopInterchangePass"),
    "scf-unroll": ("scf_unroll", "ScfUnrollPass"),
    "scf-parallelize": ("scf_parallelize", "ScfParallelizePass"),
    "scf-vector-hint": ("scf_vector_hint", "ScfVectorHintPass"),
    "scf-register-accumulate": ("scf_register_accumulate", "ScfRegisterAccumulatePass"),
    "scf-pack-reads": ("scf_pack_reads", "ScfPackReadsPass"),
    "arith-contract-fma": ("arith_contract_fma", "ArithContractFmaPass"),
    "loom-linalg-generalize-pooling": ("linalg_generalize_pooling", "LinalgGeneralizePoolingPass"),
    "loom-remove-dead-allocas": ("remove_dead_allocas", "RemoveDeadAllocasPass"),
    "loom-canonicalize": ("canonicalize", "LoomCanonicalizePass"),
    "loom-cse": ("cse", "LoomCSEPass"),
    "loom-specialize-dims": ("specialize_dims", "SpecializeDimsPass"),
    "convert-esn-to-linalg": ("convert_esn_to_linalg", "ConvertEsnToLinalgPass"),
    # custom number formats (base2 dialect)
    "lower-base2-to-arith": ("lower_base2_to_arith", "LowerBase2ToArithPass"),
    "convert-float-to-base2": ("convert_float_to_base2", "ConvertFloatToBase2Pass"),
    # accelerator host-driver generation (AXI4MLIR)
    "convert-linalg-to-accel": ("convert_linalg_to_accel", "ConvertLinalgToAccelPass"),
    "accel-tile": ("accel_tile", "AccelTilePass"),
    "accel-place-flow": ("accel_place_flow", "AccelPlaceFlowPass"),
    "convert-accel-to-runtime": ("convert_accel_to_runtime", "ConvertAccelToRuntimePass"),
    "accel-coalesce": ("accel_coalesce", "AccelCoalescePass"),
    "dma-inline-copies": ("dma_inline_copies", "DmaInlineCopiesPass"),
    "dma-inline-deferred-recvs": ("dma_inline_deferred_recvs", "DmaInlineDeferredRecvsPass"),
    # olympus system integration (dataflow graphs on bus-attached FPGAs)
    "olympus-sanitize": ("olympus_sanitize", "OlympusSanitizePass"),
    "olympus-channel-reassignment": ("olympus_channel_reassignment", "OlympusChannelReassignmentPass"),
    "olympus-replication": ("olympus_replication", "OlympusReplicationPass"),
    "olympus-bus-widening": ("olympus_bus_widening", "OlympusBusWideningPass"),
    "olympus-bus-packing": ("olympus_bus_packing", "OlympusBusPackingPass"),
    "olympus-buffer-sharing": ("olympus_buffer_sharing", "OlympusBufferSharingPass"),
}

# xDSL's name -> loom's fixed pass, used when a loom pipeline names xDSL's pass
ALIASES = {
    "convert-linalg-to-loops": "loom-convert-linalg-to-loops",
    "linalg-generalize-named-ops": "loom-linalg-generalize-named-ops",
}


def _loader(module: str, cls: str) -> Callable[[], type[ModulePass]]:
    def load() -> type[ModulePass]:
        return getattr(importlib.import_module(f"loom.passes.{module}"), cls)

    return load


LOOM_PASSES: dict[str, Callable[[], type[ModulePass]]] = {n: _loader(*where) for n, where in BUILTIN_PASSES.items()}


def register_pass(pass_class: type[ModulePass]) -> type[ModulePass]:
    """Make ``pass_class`` available by its ``name`` (usable as a decorator)."""
    LOOM_PASSES[pass_class.name] = lambda: pass_class
    return pass_class


def available_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    """Name -> loader of the pass class: xDSL's, other installed plugins', loom's and the aliases."""
    passes = {**_plugin_passes(), **LOOM_PASSES}  # LOOM_PASSES last: passes registered since count
    passes.update({alias: passes[target] for alias, target in ALIASES.items()})
    return passes


@cache
def _plugin_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    """The installed xDSL plugins' passes, scanned once per process (the scan costs ~30 ms)."""
    from xdsl.universe import Universe

    return dict(Universe.get_multiverse().all_passes)


from loom.passes.pipeline import Pipeline  # noqa: E402
from loom.passes.recipes import lower_to_c, lower_to_loops  # noqa: E402

__all__ = ["Pipeline", "available_passes", "register_pass", "lower_to_c", "lower_to_loops", "LOOM_PASSES", "BUILTIN_PASSES", "ALIASES"]
