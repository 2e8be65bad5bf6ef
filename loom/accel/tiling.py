"""Tile sizes for one accelerator flow: accelerator tiles and CPU-cache (outer) tiles.

Accelerator tiles are the description's tile sizes (fixed, or the flexible
``default``; a caller may override flexible ones). ``"full"`` dims have no tile loop.

Cache tiles (``choose_cache_tiles``). An outer tile loop around a dim repeats every
opcode placed outside that dim's accelerator loop, so only *free* dims get one: the
tile loops at positions before the outermost level where the flow places an opcode
(init opcodes excepted). Splitting a free dim changes no transfer count (its loop
already encloses every opcode), it only reorders tiles for locality. Heuristic:
one factor ``f`` (the same for every free dim) is the largest with ``f <= 64`` such
that the data of one outer block fits in half of the outermost cache (L2 on the
PYNQ-Z2): every operand counted with free dims at ``f * tile`` and other dims at
their accelerator tile (what the block keeps hot between its accelerator steps).
Half, to leave room for the staging copies and other data. ``f == 1`` or no host
description, or a kernel with "full" dims (block size unknown before run time): no
cache loops. The L1 check (the accelerator-tile working set
fits L1) is reported in the summary, never enforced.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod
from typing import Mapping

from loom.accel.description import AcceleratorDescription, HostDescription
from loom.accel.validate import FlowPlacement, tile_shape
from loom.errors import LoomError

MAX_CACHE_FACTOR = 64


@dataclass(frozen=True)
class CacheTiling:
    free_dims: tuple[str, ...]
    factor: int
    tiles: dict[str, int]  # outer tile per free dim (multiple of its accelerator tile); empty: none
    cache: str | None  # the cache level the block was fitted to
    block_bytes: int  # bytes of one outer block
    l1_bytes: int | None  # bytes of one accelerator step (all operand tiles)
    fits_l1: bool | None


def accelerator_tiles(acc: AcceleratorDescription, overrides: Mapping[str, int] | None = None) -> dict[str, int]:
    """Tile size per dim; 0 for "full" dims. Overrides apply to flexible (or equal fixed) tiles."""
    sizes: dict[str, int] = {}
    for t in acc.tiles.tiles:
        sizes[t.dim] = 0 if t.kind == "full" else int(t.nominal)
    for dim, value in (overrides or {}).items():
        if dim not in sizes:
            raise LoomError(f"tile size for unknown dim {dim!r}; {acc.name} has dims {', '.join(sizes)}",
                            where=acc.path("tile_sizes"), filename=acc.filename)
        tile = acc.tiles[dim]
        if tile.kind != "flexible" and value != sizes[dim]:
            raise LoomError(f"dim {dim!r} of {acc.name} has a {tile.kind} tile of {sizes[dim]}; "
                            f"only flexible tiles can be chosen (got {value})",
                            where=acc.path("tile_sizes", dim), filename=acc.filename)
        sizes[dim] = int(value)
    return sizes


def free_dims(placement: FlowPlacement) -> tuple[str, ...]:
    outermost = min((p.level for p in placement.opcodes), default=0)
    return placement.tile_loops[:outermost]


def _block_bytes(acc: AcceleratorDescription, sizes: Mapping[str, int], elem_bytes: int) -> int:
    total = 0
    for op in acc.operands:
        shape = tile_shape(op, sizes)
        if None in shape:
            return -1
        total += prod(shape) * elem_bytes  # type: ignore[arg-type]
    return total


def choose_cache_tiles(acc: AcceleratorDescription, placement: FlowPlacement, tiles: Mapping[str, int],
                       host: HostDescription | None, elem_bytes: int = 4) -> CacheTiling:
    free = free_dims(placement)
    nominal = {d: (t if t else 1) for d, t in tiles.items()}  # full dims: unknown extent, count 1
    l1 = host.caches[0] if host and host.caches else None
    step = _block_bytes(acc, nominal, elem_bytes)
    fits_l1 = None if l1 is None or step < 0 else step <= l1.size
    if host is None or not host.caches or not free or not all(tiles.values()):
        # "full" dims make the block size depend on the problem: no cache loops then
        return CacheTiling(free, 1, {}, None, step, step, fits_l1)
    outer = host.caches[-1]
    best, best_bytes = 1, step
    for f in range(2, MAX_CACHE_FACTOR + 1):
        sizes = {**nominal, **{d: nominal[d] * f for d in free}}
        b = _block_bytes(acc, sizes, elem_bytes)
        if b < 0 or b > outer.size // 2:
            break
        best, best_bytes = f, b
    chosen = {d: tiles[d] * best for d in free} if best > 1 else {}
    return CacheTiling(free, best, chosen, outer.name, best_bytes, step, fits_l1)
