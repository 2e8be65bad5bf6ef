"""Schedule recipes: the accelerator schedule most image pipelines share, written once.

``stream_through_accelerator`` is the Halide-to-Hardware stencil recipe
(thesis §3.4): tile the output, put the accelerator region at the tile loop
(``hw_accelerate(xi, xo)``), give every buffered stage a unified buffer at that
loop (``compute_at(output, xo)``, which also stores it there), compute every
dimension beyond x and y in space (channels fully unrolled, so all stages share
the x/y loop structure the scheduler needs), unroll the listed reductions fully
(one output per cycle) and, for ``rate`` n > 1, compute n pixels per cycle by
unrolling x of the output and of every buffered stage by n. ``roms`` are
constant tables kept in ROM (``store_in("ROM")``).

``share_kernels`` time-multiplexes identical buffered stages on one hardware kernel
(``compute_share_root``/``compute_share``, thesis §5) at a named interleaving.

``compute_in_tiles`` is the matching CPU recipe: tile the output and compute
the listed stages per tile (``compute_at(output, xo)``), so their buffers stay
small and hot in the cache. ``schedule_app`` is how the example apps' ``build``
picks a schedule.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import NamedTuple

from loom.errors import LoomError

from .declarative import channel_blocks
from .dim_map import output_dims
from .expr import Var
from .func import Func
from .location import user_location
from .schedule import MemoryType


class TileLoops(NamedTuple):
    xo: Var
    yo: Var
    xi: Var
    yi: Var


def _tile(output: Func, tile, recipe: str) -> TileLoops:
    if len(output.dims) < 2:
        raise LoomError(f"the {recipe} recipe tiles x and y, but '{output.name}' has {len(output.dims)} "
                        "dimension(s)", where=f"Func '{output.name}'", construct=recipe)
    tile = tuple(tile) if isinstance(tile, (tuple, list)) else (tile,)
    if len(tile) != 2 or not all(isinstance(n, int) and not isinstance(n, bool) and n > 0 for n in tile):
        filename, line = user_location()
        raise LoomError(f"the {recipe} recipe takes the tile as (width, height), two positive ints, got {tile!r}",
                        filename=filename, line=line, where=f"Func '{output.name}'", construct=recipe)
    loops = TileLoops(Var("xo"), Var("yo"), Var("xi"), Var("yi"))
    x, y = output.dims[:2]
    # a second recipe on one Func would fail inside tile() ("unknown variable 'x'"): say what happened instead
    done = output.schedule.hw_accelerate
    if done is not None or not {x.name, y.name} <= set(output.pure.schedule.loops):
        filename, line = user_location()
        what = (f"is already scheduled for the accelerator (hw_accelerate({', '.join(done)}))" if done else
                f"is already split or tiled (loops, innermost first: {', '.join(output.pure.schedule.loops)})")
        raise LoomError(f"'{output.name}' {what}; the {recipe} recipe tiles the Func's own x and y, so call one "
                        "recipe once per Func (for another tile, build the algorithm again)",
                        filename=filename, line=line, where=f"Func '{output.name}'", construct=recipe)
    output.tile(x, y, loops.xo, loops.yo, loops.xi, loops.yi, *tile)
    return loops


def compute_in_tiles(output: Func, tile: tuple[int, int], stages: Iterable[Func] = ()) -> TileLoops:
    """CPU: tile ``output`` by ``tile`` (w, h) and compute each of ``stages`` once per tile."""
    loops = _tile(output, tile, "compute_in_tiles")
    for f in stages:
        f.compute_at(output, loops.xo)
    return loops


def stream_through_accelerator(output: Func, tile: tuple[int, int], *, buffered: Iterable[Func] = (),
                               reductions: Iterable[Func] = (), rate: int = 1,
                               roms: Iterable[Func] = (), channels_per_cycle=None) -> TileLoops:
    """Schedule ``output``'s pipeline as a streaming accelerator over tiles of ``tile`` (w, h) pixels.

    Each buffered Func iterates the output's x and y in time (found by name, so channels may come first:
    ``hw[c, x, y]``; else its first two dims) and computes its other dims in space. ``channels_per_cycle``
    ({Var: n}, or n for the output's one dimension beyond x and y): that dimension n at a time instead, in blocks
    one after another within a pixel's step (``reorder(xi, yi, c, xo, yo)``, ``unroll(c, n)``), and so each
    buffered Func's dimension carrying it (``dim_map.output_dims``)."""
    if rate < 1:
        raise LoomError(f"rate must be >= 1 pixel per cycle, got {rate}", where=f"Func '{output.name}'",
                        construct="stream_through_accelerator")
    blocks = channel_blocks(output, channels_per_cycle, "stream_through_accelerator")
    loops = _tile(output, tile, "stream_through_accelerator")
    for d in output.dims[2:]:
        if d.name in blocks:  # iterated inside the invocation, a block of channels a cycle
            output.reorder(loops.xi, loops.yi, d, loops.xo, loops.yo)
        output.unroll(d, blocks.get(d.name))
    output.hw_accelerate(loops.xi, loops.xo)
    buffered = list(buffered)
    # a buffered Func's dim carrying a blocked output dim (by its access maps, not its Var's name) takes its blocks
    blocked = {k: blocks[d.name] for k, d in enumerate(output.dims) if d.name in blocks}
    carried = output_dims(output) if blocked else {}
    for f in buffered:
        f.compute_at(output, loops.xo)
        for d in _space_dims(f, output):
            n = blocked.get(carried.get(id(f), {}).get(next(j for j, e in enumerate(f.dims) if e is d)))
            f.unroll(d, n)
            for i, u in enumerate(f.updates):  # each definition has its own schedule (Halide)
                if d.name in u.schedule.loops:
                    f.update(i).unroll(d, n)
    for f in reductions:
        for i, d in enumerate(f.updates):
            stage = f.update(i)
            for rv in d.rvars:
                stage.unroll(rv)
    if rate > 1:
        output.unroll(loops.xi, rate)
        for f in buffered:
            f.unroll(_pixel_dims(f, output)[0], rate)
    for f in roms:
        f.store_in(MemoryType.ROM)
    return loops


def _pixel_dims(f: Func, output: Func) -> list:
    """``f``'s dims named as the output's x and y (channels first or last), else its first two."""
    names = [d.name for d in output.dims[:2]]
    found = [d for n in names for d in f.dims if d.name == n]
    return found if len(found) == len(names) else list(f.dims[:2])


def _space_dims(f: Func, output: Func) -> list:
    pixels = {d.name for d in _pixel_dims(f, output)}
    return [d for d in f.dims if d.name not in pixels]


INTERLEAVE_LEVELS = ("pixel", "line", "block")


def share_kernels(members: Iterable[Func], interleave: str, loops: TileLoops) -> Func:
    """Share one hardware kernel among ``members`` (producers first; the last is the root).

    ``interleave``: "pixel" (the root's x), "line" (its y) or "block" (the accelerator's tile loop)."""
    members = list(members)
    if len(members) < 2:
        raise LoomError(f"sharing a kernel needs at least 2 stages, got {len(members)}",
                        where=f"Func '{members[0].name if members else '?'}'", construct="compute_share")
    root = members[-1]
    if interleave not in INTERLEAVE_LEVELS:
        raise LoomError(f"unknown interleaving '{interleave}': expected one of {', '.join(INTERLEAVE_LEVELS)}",
                        where=f"Func '{root.name}'", construct="compute_share_root")
    level = {"pixel": root.dims[0], "line": root.dims[1], "block": loops.xo}[interleave]
    root.compute_share_root(level)
    for f in members[:-1]:
        f.compute_share(root)
    return root


def schedule_app(funcs: dict, schedule: str, cpu_schedule: Callable[[dict], None],
                 accel_schedule: Callable[..., None], **accel_args) -> tuple[Func, dict]:
    """Apply the named schedule ("accel", "cpu" or "none") to an app's Funcs; returns (output, funcs)."""
    if schedule == "accel":
        accel_schedule(funcs, **accel_args)
    elif schedule == "cpu":
        cpu_schedule(funcs)
    elif schedule != "none":
        raise LoomError(f"unknown schedule '{schedule}': expected accel, cpu or none",
                        where=f"Func '{funcs['output'].name}'")
    return funcs["output"], funcs


__all__ = ["TileLoops", "compute_in_tiles", "stream_through_accelerator", "share_kernels", "INTERLEAVE_LEVELS",
           "schedule_app"]
