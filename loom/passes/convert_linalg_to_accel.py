"""``convert-linalg-to-accel{accel-file=F accelerator=NAME flow=FLOW tile-sizes=.. cache-tiling=true}``

The one boundary where an accelerator description file is read: from here on
the description travels in the IR.

Matches: ``linalg.generic`` ops on memrefs (run ``linalg-generalize-named-ops``
first) whose indexing maps, iterator types and body equal the accelerator's kernel
(``loom.accel.matching``: a transposed matmul is not a matmul; a strided
convolution matches a window accelerator). With ``accel-file`` every accelerator
of the file (or only ``accelerator``) is tried in order, the first that matches
wins. Without ``accel-file`` the description already in the IR is used: ops that
carry an ``accel.accelerator`` attribute but no ``accel.plan`` are matched
against that accelerator.
Produces: on the matched op
``accel.accelerator = #accel.accelerator<"NAME", "{json}">`` (the host and this
accelerator's description, canonical JSON, a ``"cpu"`` file reference inlined)
and ``accel.plan = #accel.plan<flow "F", dims [..], tiles [..], cache [..],
permutation [..]>``: the accelerator tiles (the flexible ones from ``tile-sizes``
given in the accelerator's dim order, else their defaults), the cache tiles
(``loom.accel.tiling.choose_cache_tiles``) and the flow's tile-loop order.
Nothing is moved yet.
``assign="NAME","*","-",..``: one entry per not yet planned ``linalg.generic`` of the module,
in textual order: the accelerator that computes it (it must match it; a system of several
accelerators drives each op on its own one), ``*`` (the first that matches, as without
``assign``) or ``-`` (none: the host computes it). ``loom.driver`` fills it from a cost model.
Leaves alone: ops that do not match, ops that already have an ``accel.plan``.
Errors (LoomError naming accelerator, flow and op): no op of the module matches
(each op's first difference is listed), element type differs from the
accelerator's data type, unknown accelerator or flow, illegal tile sizes.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.linalg.ops import GenericOp
from xdsl.passes import ModulePass

from loom.accel.description import AcceleratorDescription, HostDescription
from loom.accel.matching import describe_op, element_type_of, match_generic
from loom.accel.tiling import accelerator_tiles, choose_cache_tiles
from loom.accel.validate import place_flow
from loom.dialects.accel import AcceleratorAttr, PlanAttr
from loom.errors import LoomError
from loom.passes.accel_ir import ACCELERATOR, PLAN, embed_description, read_description_file, system_of


@dataclass(frozen=True)
class ConvertLinalgToAccelPass(ModulePass):
    name = "convert-linalg-to-accel"

    accel_file: str = ""
    accelerator: str = ""
    flow: str = ""
    tile_sizes: tuple[int, ...] = ()
    cache_tiling: bool = True
    assign: tuple[str, ...] = ()

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        generics = [g for g in op.walk() if isinstance(g, GenericOp) and PLAN not in g.attributes]
        if not self.accel_file:
            if self.assign:
                raise LoomError("assign needs accel-file (the accelerators it names)", where=self.name)
            self._from_ir([g for g in generics if ACCELERATOR in g.attributes])
            return
        path = os.path.abspath(self.accel_file)
        system, raw = read_description_file(path)
        candidates = [system.accelerator(self.accelerator)] if self.accelerator else list(system.accelerators)
        choices = self._choices(generics, system, path)
        reasons: list[str] = []
        matched = 0
        embedded: dict[str, AcceleratorAttr] = {}  # one attribute per accelerator, shared by its ops
        for generic, choice in zip(generics, choices):
            if choice == "-":  # the host computes it
                continue
            for acc in candidates if choice == "*" else [system.accelerator(choice)]:
                match = match_generic(generic, acc)
                if isinstance(match, str) and choice != "*":
                    raise LoomError(f"{describe_op(generic)} is assigned to accelerator {acc.name} but does not match "
                                    f"it: {match}", where=f"{self.name}{{assign}} entry {generics.index(generic)}",
                                    filename=path)
                if isinstance(match, str):
                    reasons.append(f"{acc.name}: {describe_op(generic)}: {match}")
                    continue
                elem = element_type_of(generic)
                if choice == "*" and not self.accelerator and elem != acc.data_type and acc is not candidates[-1]:
                    # another accelerator of the description may take its data type (one named is held to it)
                    reasons.append(f"{acc.name}: data type mismatch: {describe_op(generic)} works on {elem}, the "
                                   f"accelerator takes {acc.data_type}")
                    continue
                if acc.name not in embedded:
                    embedded[acc.name] = embed_description(raw, path, acc.name)
                self._annotate(generic, acc, system.host, embedded[acc.name])
                matched += 1
                break
        if not matched:
            names = ", ".join(a.name for a in candidates)
            detail = "; ".join(reasons) if reasons else _no_linalg_detail(op)
            raise LoomError(f"no operation matches accelerator {names} (flow {self._flow_text(candidates)}): {detail}",
                            where=self.name, filename=path)

    def _choices(self, generics: list[GenericOp], system, path: str) -> list[str]:
        """Per op: an accelerator name, "*" (first match) or "-" (host); checked against the file."""
        if not self.assign:
            return ["*"] * len(generics)
        where = f"{self.name}{{assign}}"
        if self.accelerator:
            raise LoomError("give accelerator or assign, not both", where=where)
        if len(self.assign) != len(generics):
            raise LoomError(f"assign has {len(self.assign)} entries, the module {len(generics)} linalg.generic ops "
                            "to place (one entry each, in textual order: a name, * or -)", where=where)
        names = [a.name for a in system.accelerators]
        for k, choice in enumerate(self.assign):
            if choice not in ("*", "-") and choice not in names:
                raise LoomError(f"entry {k}: no accelerator {choice!r} in the description; expected one of "
                                f"{', '.join(names)}, * (first match) or - (host)", where=where, filename=path)
        return list(self.assign)

    def _from_ir(self, generics: list[GenericOp]) -> None:
        """No file: plan the ops that already carry their accelerator."""
        if not generics:
            raise LoomError(f"{self.name}: give accel-file (the accelerator description JSON), or run it on ops "
                            f"that carry an {ACCELERATOR} attribute", where=self.name)
        for generic in generics:
            system = system_of(generic)
            attr = generic.attributes[ACCELERATOR]
            acc = system.accelerator(attr.accelerator.data)  # type: ignore[attr-defined]
            if self.accelerator and self.accelerator != acc.name:
                continue
            match = match_generic(generic, acc)
            if isinstance(match, str):
                raise LoomError(f"{describe_op(generic)} carries accelerator {acc.name} but does not match it: "
                                f"{match}", where=self.name)
            self._annotate(generic, acc, system.host, attr)  # type: ignore[arg-type]

    def _flow_text(self, candidates: list[AcceleratorDescription]) -> str:
        return self.flow or ("selected: " + ", ".join(f"{a.name}={a.selected_flow}" for a in candidates))

    def _annotate(self, generic: GenericOp, acc: AcceleratorDescription, host: HostDescription | None,
                  described: AcceleratorAttr) -> None:
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
        cache = choose_cache_tiles(acc, placement, tiles, host if self.cache_tiling else None)
        dims = acc.dims
        generic.attributes[ACCELERATOR] = described
        generic.attributes[PLAN] = PlanAttr(flow.name, dims, [tiles[d] or 0 for d in dims],
                                            [cache.tiles.get(d, 0) for d in dims],
                                            [dims.index(d) for d in placement.loop_order])


def _no_linalg_detail(module) -> str:
    """Why nothing matched when no op could: an accelerator takes linalg ops, and a kernel written as loops
    (a ``@loom.kernel`` with ``for``) has none."""
    loops = [o for o in module.walk() if o.name in ("scf.for", "affine.for", "scf.parallel")]
    if loops:
        return (f"the module has no linalg op, only loops ({len(loops)} {loops[0].name}): an accelerator matches "
                "linalg ops; write the kernel with loom.linalg (linalg.matmul(A, B, C), linalg.einsum('mk,k->m', "
                "A, x, out=y), linalg.generic, ...) instead of for loops")
    return "the module has no linalg.generic on memrefs (generalize named ops and bufferize first)"
