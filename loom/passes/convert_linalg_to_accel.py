"""``convert-linalg-to-accel{accel-file=F accelerator=NAME flow=FLOW tile-sizes=.. cache-tiling=true}``

Matches: ``linalg.generic`` ops on memrefs (run ``linalg-generalize-named-ops``
first) whose indexing maps, iterator types and body equal the accelerator's kernel
(``loom.accel.matching``: a transposed matmul is not a matmul; a strided
convolution matches a window accelerator). With no ``accelerator`` option every
accelerator of the file is tried in order, the first that matches wins.
Produces: the same op annotated with ``accel.accelerator``, ``accel.flow``,
``accel.description``, ``accel.dims``, ``accel.tile_sizes`` (accelerator tiles; the
flexible ones from ``tile-sizes`` given in the accelerator's dim order, else their
defaults), ``accel.cache_tiles`` (``loom.accel.tiling.choose_cache_tiles``) and
``accel.permutation`` (the flow's loop order). Nothing is moved yet.
Leaves alone: ops that do not match, ops already annotated.
Errors (LoomError naming accelerator, flow and op): no op of the module matches
(each op's first difference is listed), element type differs from the
accelerator's data type, unknown accelerator or flow, illegal tile sizes.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.linalg.ops import GenericOp
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.passes import ModulePass

from loom.accel.description import AcceleratorDescription
from loom.accel.matching import describe_op, element_type_of, match_generic
from loom.accel.tiling import accelerator_tiles, choose_cache_tiles
from loom.accel.validate import place_flow
from loom.errors import LoomError
from loom.passes.accel_ir import (
    ACCELERATOR,
    CACHE_TILES,
    DESCRIPTION,
    DIMS,
    FLOW,
    PERMUTATION,
    TILE_SIZES,
    _load,
    i64_array,
    strings,
)


@dataclass(frozen=True)
class ConvertLinalgToAccelPass(ModulePass):
    name = "convert-linalg-to-accel"

    accel_file: str = ""
    accelerator: str = ""
    flow: str = ""
    tile_sizes: tuple[int, ...] = ()
    cache_tiling: bool = True

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if not self.accel_file:
            raise LoomError(f"{self.name}: accel-file (the accelerator description JSON) is required")
        path = os.path.abspath(self.accel_file)
        system = _load(path)
        candidates = [system.accelerator(self.accelerator)] if self.accelerator else list(system.accelerators)
        generics = [g for g in op.walk() if isinstance(g, GenericOp) and ACCELERATOR not in g.attributes]
        reasons: list[str] = []
        matched = 0
        for generic in generics:
            for acc in candidates:
                match = match_generic(generic, acc)
                if isinstance(match, str):
                    reasons.append(f"{acc.name}: {describe_op(generic)}: {match}")
                    continue
                self._annotate(generic, acc, path)
                matched += 1
                break
        if not matched:
            names = ", ".join(a.name for a in candidates)
            detail = "; ".join(reasons) if reasons else "the module has no linalg.generic on memrefs " \
                "(generalize named ops and bufferize first)"
            raise LoomError(f"no operation matches accelerator {names} (flow {self._flow_text(candidates)}): {detail}",
                            where=self.name, filename=path)

    def _flow_text(self, candidates: list[AcceleratorDescription]) -> str:
        return self.flow or ("selected: " + ", ".join(f"{a.name}={a.selected_flow}" for a in candidates))

    def _annotate(self, generic: GenericOp, acc: AcceleratorDescription, path: str) -> None:
        flow_name = self.flow or acc.selected_flow
        try:
            flow = acc.flow(flow_name)
        except LoomError as err:
            raise LoomError(f"accelerator {acc.name}: {err.message}", where=err.where, filename=err.filename) from None
        elem = element_type_of(generic)
        if elem != acc.data_type:
            raise LoomError(f"data type mismatch: {describe_op(generic)} works on {elem} but accelerator "
                            f"{acc.name} (flow {flow.name}) takes {acc.data_type}",
                            where=acc.path("data_type"), filename=acc.filename)
        overrides = None
        if self.tile_sizes:
            if len(self.tile_sizes) != len(acc.dims):
                raise LoomError(f"tile-sizes has {len(self.tile_sizes)} entries, accelerator {acc.name} has "
                                f"{len(acc.dims)} dims ({', '.join(acc.dims)})", where=self.name)
            overrides = {d: t for d, t in zip(acc.dims, self.tile_sizes) if acc.tiles[d].kind == "flexible"}
        tiles = accelerator_tiles(acc, overrides)
        placement = place_flow(acc, flow.name, {d: t for d, t in tiles.items() if acc.tiles[d].kind == "flexible"})
        cache = choose_cache_tiles(acc, placement, tiles, _load(path).host if self.cache_tiling else None)
        dims = acc.dims
        generic.attributes[ACCELERATOR] = StringAttr(acc.name)
        generic.attributes[FLOW] = StringAttr(flow.name)
        generic.attributes[DESCRIPTION] = StringAttr(path)
        generic.attributes[DIMS] = strings(dims)
        generic.attributes[TILE_SIZES] = i64_array(tiles[d] for d in dims)
        generic.attributes[CACHE_TILES] = i64_array(cache.tiles.get(d, 0) for d in dims)
        generic.attributes[PERMUTATION] = i64_array(dims.index(d) for d in placement.loop_order)
