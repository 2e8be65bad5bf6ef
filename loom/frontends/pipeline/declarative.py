"""Declarative scheduling (thesis §3.6): iteration levels, memories and an output rate, as sugar.

Every primitive here only calls the imperative ones (``split``, ``reorder``,
``hw_accelerate``, ``compute_at``, ``unroll``), so a declarative schedule builds
exactly the design of the imperative schedule it stands for.

``IterLevel(name, [(x, 62), (y, 62)])`` is one level of the iteration (and memory)
hierarchy, its loops innermost first with their sizes; the outermost level may
omit sizes (it covers what is left). ``f.iteration_order([inner, ..., outer])``
splits each listed Var of ``f`` once per level, naming the loop of Var ``x`` at
level ``L`` ``x_L``, and orders the loops level by level (innermost level
innermost): ``[IterLevel("CGRA", [(x, W), (y, H)]), IterLevel("host")]`` is
``tile(x, y, x_host, y_host, x_CGRA, y_CGRA, W, H)``.
``f.get_looplevel("CGRA", x)`` is the loop one CGRA tile is computed at (Var
``x``'s loop in the next level outward, ``LoopLevel(f, "x_host")``), what
``compute_at`` takes. ``f.accelerate("CGRA")`` makes the level the accelerator
(``hw_accelerate(x_CGRA, x_host)``). ``f.output_rate(n)`` asks for n outputs per
cycle: ``accelerate`` then unrolls ``f``'s innermost loop by n and fully unrolls
every reduction the accelerator computes (one output per cycle needs it; thesis
§3.5), and ``create_memories`` unrolls each memory's x by n. Without
``output_rate``, reductions are left to the user (a DNN layer iterating its
reduction in time; the thesis notes ``output_rate`` does not fit those).
``f.create_memories([g, ...], level)`` gives each ``g`` a buffer at ``level``
(``compute_at``, which also stores there) and computes its dimensions beyond x
and y in space (fully unrolled), as the streaming accelerator needs.
``g.stream_to_accelerator(levels, looplevels)`` builds an input's memory
hierarchy from ``in_()`` copies, one per level, and ``g.get_memory_level(name)``
hands back the copy of a level.
"""

from __future__ import annotations

from loom.errors import LoomError

from .location import user_location
from .schedule import LoopLevel, MemoryType, var_name


class IterLevel:
    """One named level of the iteration hierarchy: (Var, size) pairs, innermost first."""

    def __init__(self, name: str, loops=()):
        if not isinstance(name, str) or not name.isidentifier():
            raise _error("IterLevel", f"level name must be an identifier (it names loops), got {name!r}")
        self.name = name
        self.loops: list[tuple[str, int | None]] = []
        for item in loops:
            if not isinstance(item, (tuple, list)) or len(item) != 2:
                raise _error("IterLevel", f"level '{name}': expected (Var, size) pairs, got {item!r}")
            v, size = var_name(item[0]), item[1]
            if size is not None and (not isinstance(size, int) or size <= 0):
                raise _error("IterLevel", f"level '{name}': size of '{v}' must be a positive int, got {size!r}")
            if v in (n for n, _ in self.loops):
                raise _error("IterLevel", f"level '{name}' lists '{v}' twice")
            self.loops.append((v, size))

    def size(self, var: str) -> int | None:
        return dict(self.loops).get(var)

    def __repr__(self):
        return f"IterLevel({self.name!r}, {self.loops!r})"


def _error(construct: str, msg: str, where: str | None = None):
    filename, line = user_location()
    return LoomError(f"{construct}: {msg}", filename=filename, line=line, where=where, construct=construct)


def loop_name(var: str, level: str) -> str:
    return f"{var}_{level}"


class DeclarativeMixin:
    """The declarative primitives of a Func (mixed into ``Func``)."""

    def iteration_order(self, levels):
        fs = self._func_schedule("iteration_order")
        levels = list(levels)
        if not levels or not all(isinstance(lv, IterLevel) for lv in levels):
            raise self._sched_error("iteration_order", f"expects a list of IterLevels, innermost first, got {levels!r}")
        names = [lv.name for lv in levels]
        if len(set(names)) != len(names):
            raise self._sched_error("iteration_order", f"level names repeat: {names}")
        if fs.levels:
            raise self._sched_error("iteration_order", "already called on this Func")
        dims = [d.name for d in self.dims]
        for lv in levels:
            if not lv.loops and lv is not levels[-1]:
                raise self._sched_error("iteration_order", f"level '{lv.name}' lists no loops; only the outermost "
                                        "level may omit them (give (Var, size) pairs, innermost first)")
            for v, size in lv.loops:
                if v not in dims:
                    raise self._sched_error("iteration_order", f"level '{lv.name}' names '{v}', which is not a "
                                            f"dimension of {self.name} ({', '.join(dims)})")
                if size is None and lv is not levels[-1]:
                    raise self._sched_error("iteration_order", f"level '{lv.name}' gives '{v}' no size; only the "
                                            "outermost level may omit sizes")
        if _memory_level_names(self, levels):
            return self._output_memory_levels(levels)
        split_dims = [d for d in dims if any(lv.size(d) for lv in levels[:-1])]
        order = {lv.name: [] for lv in levels}
        for d in split_dims:
            current = d
            inner_levels = [lv for lv in levels[:-1] if lv.size(d)]
            for k, lv in enumerate(inner_levels):
                last = k == len(inner_levels) - 1
                outer = loop_name(d, levels[-1].name) if last else f"{d}_above_{lv.name}"
                self.split(current, outer, loop_name(d, lv.name), lv.size(d))
                order[lv.name].append(loop_name(d, lv.name))
                current = outer
            order[levels[-1].name].append(current)
        # loops level by level, each level in its listed order (unlisted split dims after the listed ones)
        sequence = []
        for lv in levels:
            listed = [loop_name(v, lv.name) for v, _ in lv.loops if loop_name(v, lv.name) in order[lv.name]]
            sequence += listed + [n for n in order[lv.name] if n not in listed]
        if len(sequence) > 1:
            self.reorder(*sequence)
        fs.levels = levels
        return self

    def get_looplevel(self, level: str, var) -> LoopLevel:
        """The loop one tile of ``level`` is computed at: ``var``'s loop in the next level outward."""
        fs = self._func_schedule("get_looplevel")
        names = [lv.name for lv in fs.levels]
        if level not in names:
            raise self._sched_error("get_looplevel", f"unknown level '{level}' (levels, innermost first: "
                                    f"{', '.join(names) or 'none; call iteration_order first'})")
        k = names.index(level)
        if k == len(names) - 1:
            return LoopLevel.root()
        v = var_name(var)
        copies = _output_levels(fs)
        if copies:  # the loop over this level's tiles is on the copy one level out
            outer = copies[names[k + 1]]
            if loop_name(v, names[k + 1]) not in outer._stage_schedule.loops:
                raise self._sched_error("get_looplevel", f"'{v}' is not split at level '{level}' (loops of "
                                        f"{outer.name}: {', '.join(outer._stage_schedule.loops)})")
            return LoopLevel(outer, loop_name(v, names[k + 1]))
        for lv in fs.levels[k + 1:]:
            name = loop_name(v, lv.name)
            if name in self._stage_schedule.loops:
                return LoopLevel(self, name)
        raise self._sched_error("get_looplevel", f"'{v}' is not split at level '{level}' or outside it (loops, "
                                f"innermost first: {', '.join(self._stage_schedule.loops)})")

    def output_rate(self, n: int):
        fs = self._func_schedule("output_rate")
        if not isinstance(n, int) or n < 1:
            raise self._sched_error("output_rate", f"rate must be a positive int (outputs per cycle), got {n!r}")
        if fs.hw_accelerate is not None or any(c.schedule.hw_accelerate for c in _output_levels(fs).values()):
            raise self._sched_error("output_rate", "call output_rate before accelerate (the rate sets its unrolling)")
        fs.output_rate = n
        return self

    def accelerate(self, level: str, channels_per_cycle=None):
        """``hw_accelerate`` at ``level``: its loops inside the accelerator, the next level's outside.

        ``channels_per_cycle`` ({Var: n}, or n for the one dimension beyond x and y): compute that dimension n at a
        time, its blocks one after another within a pixel's step (a DNN layer's output channels: the PEs of n
        channels, ceil(C / n) cycles a pixel), instead of every channel in space. It is the imperative
        ``reorder(..., c, xo, ...)`` (c inside the invocation) and ``unroll(c, n)``; ``create_memories`` then
        computes a memory's dimension of the same Var n at a time too."""
        fs = self._func_schedule("accelerate")
        done = fs.hw_accelerate or next((c.schedule.hw_accelerate for c in _output_levels(fs).values()
                                         if c.schedule.hw_accelerate), None)
        if done:  # a second call would unroll the channels and the rate again (split twice)
            raise self._sched_error("accelerate", f"already called (hw_accelerate({', '.join(done)})); accelerate "
                                    "once per Func")
        blocks = channel_blocks(self, channels_per_cycle, "accelerate")
        if _output_levels(fs):
            return self._accelerate_levels(level, blocks)
        if fs.memories and blocks:
            from .dim_map import output_dims

            carried, out_blocked = output_dims(self), {k for k, d in enumerate(self.dims) if d.name in blocks}
            done = [g.name for g in fs.memories if out_blocked & set(carried.get(id(g), {}).values())]
            if done:
                raise self._sched_error("accelerate", f"create_memories already computed {', '.join(done)} with "
                                        f"every channel in space; call accelerate(..., channels_per_cycle=...) "
                                        "before create_memories, which then computes their channels in blocks too")
        names = [lv.name for lv in fs.levels]
        if level in names[:-1] and loop_name(self.dims[0].name, level) not in self._stage_schedule.loops:
            raise self._sched_error("accelerate", f"level '{level}' does not split '{self.dims[0].name}' (the "
                                    f"accelerator streams its tile along '{self.dims[0].name}'); give level '{level}' "
                                    f"a size for '{self.dims[0].name}'")
        outer = self.get_looplevel(level, self.dims[0])
        if outer.is_root:
            raise self._sched_error("accelerate", f"level '{level}' is the outermost; the host needs a level "
                                    "outside the accelerator")
        inner = loop_name(self.dims[0].name, level)
        dims = [d.name for d in self.dims]
        for lv in fs.levels[:[lv.name for lv in fs.levels].index(level) + 1]:
            listed = [v for v, _ in lv.loops]
            if listed != sorted(listed, key=dims.index):
                raise self._sched_error("accelerate", f"level '{lv.name}' lists {', '.join(listed)}, but the "
                                        f"accelerator computes {self.name} in its dimensions' order "
                                        f"({', '.join(dims)}, innermost first); list the level's loops so")
        self._check_accelerated_loops(level, outer.var)
        for d, n in blocks.items():
            size = fs.levels[names.index(level)].size(d)
            if size is not None and n > size:
                raise self._sched_error("accelerate", f"channels_per_cycle computes {n} of '{d}' a cycle, more than "
                                        f"the {size} of level '{level}' along '{d}'; ask for at most {size}")
        self.hw_accelerate(inner, outer.var)
        for d in self.dims[2:]:  # dimensions beyond x and y are computed in space (or in blocks)
            tile_loop = loop_name(d.name, level)
            loop = tile_loop if tile_loop in self._stage_schedule.loops else \
                d.name if d.name in self._stage_schedule.loops else None
            if loop is None:
                continue
            if d.name not in blocks:
                self.unroll(loop)  # a level's tile of channels: the host loops over channel tiles
                continue
            loops = self._stage_schedule.loops
            at, now = loops.index(outer.var), loops.index(loop)
            if now > at:  # an unlisted dimension is outside the invocation: its blocks are iterated inside it
                self.reorder(*loops[:at], loop, *loops[at:now])
            self.unroll(loop, blocks[d.name])
        fs.channel_blocks = blocks
        rate = fs.output_rate
        if rate is not None:
            if rate > 1:
                self._check_rate_fits(rate, fs.levels[names.index(level)])
                self.unroll(inner, rate)
            for g in self._accelerated_funcs():
                _unroll_reductions(g)
        return self

    def _check_accelerated_loops(self, level: str, outer: str):
        """The loops inside the accelerator's invocation loop ``outer`` must be one tile of ``level`` and the levels
        inside it, in the dimensions' order: the accelerator streams x, then y (thesis §3.4)."""
        fs = self.schedule
        names = [lv.name for lv in fs.levels]
        inner_levels = names[:names.index(level) + 1]
        loops = self._stage_schedule.loops
        inside = loops[:loops.index(outer)]
        dims = [d.name for d in self.dims]
        owner = {loop_name(d, lv): (d, lv) for d in dims for lv in names}
        outside = [n for n in inside if n not in owner or owner[n][1] not in inner_levels]
        if outside:
            lv = owner[outside[0]][1] if outside[0] in owner else names[names.index(level) + 1]
            raise self._sched_error("accelerate", f"loop '{outside[0]}' of level '{lv}' comes before '{outer}' in "
                                    f"iteration_order, so one invocation (one '{outer}' iteration) would run it too; "
                                    f"list '{dims[0]}' first in level '{lv}' (tiles in row-major order)")
        order = [dims.index(owner[n][0]) for n in inside]
        if order != sorted(order):
            raise self._sched_error("accelerate", f"level '{level}' holds the tiles of level(s) "
                                    f"{', '.join(inner_levels[:-1])} (loops, innermost first: {', '.join(inside)}), "
                                    f"but the accelerator streams {self.name} in its dimensions' order "
                                    f"({', '.join(dims)}); accelerate('{inner_levels[0]}') (one invocation per "
                                    f"'{inner_levels[0]}' tile), or leave out the levels inside '{level}'")
        return inside

    def _check_rate_fits(self, rate: int, fabric) -> None:
        """output_rate(n) computes n pixels of a fabric tile's row a cycle: the tile must be n wide at least."""
        x = self.dims[0].name
        width = fabric.size(x)
        if width is not None and rate > width:
            raise self._sched_error("accelerate", f"output_rate({rate}) computes {rate} pixels a cycle, more than "
                                    f"the {width} of level '{fabric.name}' along '{x}'; ask for at most {width} "
                                    f"(a divisor of {width} keeps every lane busy) or give level '{fabric.name}' "
                                    f"at least {rate} along '{x}'")

    def create_memories(self, funcs, level: LoopLevel | None = None):
        """A buffer for each of ``funcs`` at ``level`` (default: this Func's accelerator loop)."""
        fs = self._func_schedule("create_memories")
        if level is None and _output_levels(fs):
            level = self.get_looplevel(fs.levels[0].name, self.dims[0])
        if level is None:
            if fs.hw_accelerate is None:
                raise self._sched_error("create_memories", "give a LoopLevel, or call accelerate first")
            level = LoopLevel(self, fs.hw_accelerate[1])
        if not isinstance(level, LoopLevel):
            raise self._sched_error("create_memories", f"expects a LoopLevel (get_looplevel), got {level!r}")
        rate = fs.output_rate
        from .dim_map import output_dims
        from .func import Func, ImageParam
        funcs = list(funcs)
        for g in funcs:
            if not isinstance(g, Func):
                what = ("an input, which the host streams in: list the Func that copies it (hw_input[x, y] = "
                        "input[x, y])" if isinstance(g, ImageParam) else f"a {type(g).__name__}")
                raise self._sched_error("create_memories", f"expects the Funcs to buffer, got {g!r}, {what}")
        # which output dim each memory dim carries (its access maps): its pixel dims stay in time, the others are
        # computed in space, or in the output's channel blocks when they carry a blocked output dim
        blocked = {k: fs.channel_blocks[d.name] for k, d in enumerate(self.dims) if d.name in fs.channel_blocks}
        carried = output_dims(self)
        for g in funcs:
            if g is self or (not level.is_root and g is level.func):
                raise self._sched_error("create_memories", f"'{g.name}' is the Func the memories are computed in "
                                        f"(its loop '{level.var}'); list the Funcs it reads that need a buffer")
            if level.is_root:
                g.compute_root()
            else:
                g.compute_at(level)
            dims = carried.get(id(g), {})
            for j in _space_dims(g, dims):  # the output's channels a cycle for a dim carrying it, else in space
                n = blocked.get(dims.get(j))
                if n and j < 2:  # the accelerator takes a stage's first two dims as its pixels' (lanes, rows)
                    raise self._sched_error("create_memories", f"'{g.name}' carries the output's "
                                            f"'{self.dims[dims[j]].name}' (computed {n} a cycle) in its dimension "
                                            f"{j} ('{g.dims[j].name}'); channels in blocks are computed only in a "
                                            "Func's dimensions after x and y: define it channels last "
                                            f"({g.name}[x, y, ..., {g.dims[j].name}])")
                g.unroll(g.dims[j], n)
            if rate is not None and rate > 1:
                g.unroll(g.dims[0], rate)
            fs.memories.append(g)
        return self

    def stream_to_accelerator(self, levels=None, looplevels=None):
        """Without arguments: mark this Func a host-computed accelerator input (``schedule.py``).

        ``stream_to_accelerator(["CGRA", ..., "host"], [cgra_loop, ..., LoopLevel.root()])`` (thesis §3.6):
        a copy of this Func per memory level, innermost first, each computed at its loop level
        (``in_()`` chained: the innermost level reads the copy of the next), stored in the memory type the
        level names if it is one (``GLB``); this Func itself is the last (host) level and the accelerator
        input. With ``output_rate(n)`` (this Func's, else that of the Func the loop levels belong to), every copy's x
        is unrolled by n."""
        if levels is None and looplevels is None:
            return super().stream_to_accelerator()
        self._func_schedule("stream_to_accelerator")
        levels, looplevels = list(levels or []), list(looplevels or [])
        if len(levels) < 2 or len(levels) != len(looplevels):
            raise self._sched_error("stream_to_accelerator", f"expects as many loop levels as memory levels, and at "
                                    f"least an accelerator and a host level; got {levels} and {len(looplevels)} "
                                    "loop levels")
        if not all(isinstance(lv, LoopLevel) for lv in looplevels):
            raise self._sched_error("stream_to_accelerator", "loop levels must be LoopLevels (get_looplevel, "
                                    "LoopLevel.root())")
        glb = [k for k, n in enumerate(levels) if n == MemoryType.GLB]
        tiles = [k for k, n in enumerate(levels) if n in _FABRIC_MEMORIES]
        if (glb and glb[0] == 0) or (glb and any(k > glb[0] for k in tiles)):
            raise self._sched_error("stream_to_accelerator", f"level order {levels} cannot exist: the fabric reads "
                                    "memory tiles, which the GLB feeds; list the levels innermost first, e.g. "
                                    "['CGRA', 'GLB', 'host']")
        fs = self.schedule
        rate = fs.output_rate or _consumer_rate(looplevels)
        copies = {levels[-1]: self}
        current = self
        for name in reversed(levels[:-1]):  # the host level is this Func; each inner level copies the outer
            current = current.in_()
            copies[name] = current
        for name, level in zip(levels, looplevels):
            f = copies[name]
            f.compute_at(level)
            if name in MemoryType.ALL:
                f.store_in(name)
            if f is not self:
                for d in f.dims[2:]:
                    f.unroll(d)
                if rate is not None and rate > 1:
                    f.unroll(f.dims[0], rate)
        self.accelerator_input()
        fs.memory_levels = {name: copies[name] for name in levels}  # innermost first
        return self

    def _output_memory_levels(self, levels):
        """Output-side memory levels (thesis Code 3.8): ``[fabric, GLB, host]`` makes this Func the fabric's
        output level (computed per fabric tile, held in a memory tile), ``self.in_()`` the GLB level (stored in
        the GLB, computed per GLB tile and tiled again for the fabric) and ``self.in_().in_()`` the host level
        (``compute_root``, tiled by the GLB tile; ``accelerate(GLB)`` accelerates it)."""
        fs = self.schedule
        inner, mid, outer = levels
        split = [d.name for d in self.dims if inner.size(d.name)]
        for v, size in mid.loops:
            if size is not None and not inner.size(v):
                raise self._sched_error("iteration_order", f"level '{mid.name}' counts '{v}' in tiles of level "
                                        f"'{inner.name}', which gives '{v}' no size")
        if not split:
            raise self._sched_error("iteration_order", f"level '{inner.name}' (the fabric tile) sizes no dimension")
        if any(size is not None for _, size in outer.loops):
            raise self._sched_error("iteration_order", f"the host level '{outer.name}' covers what is left of the "
                                    "image: give its loops no sizes")
        glb = self.in_()
        host = glb.in_()
        for f, (lo, hi), factor in ((host, (mid, outer), lambda d: inner.size(d) * (mid.size(d) or 1)),
                                    (glb, (inner, mid), inner.size)):
            for d in split:
                f.split(d, loop_name(d, hi.name), loop_name(d, lo.name), factor(d))
            if len(split) > 1:
                f.reorder(*[loop_name(d, lv.name) for lv in (lo, hi) for d in _listed_first(lv, split)])
        host.compute_root()
        glb.compute_at(host, loop_name(split[0], outer.name)).store_in(mid.name)
        self.compute_at(glb, loop_name(split[0], mid.name))
        fs.levels = levels
        fs.memory_levels = {inner.name: self, mid.name: glb, outer.name: host}  # innermost first
        return self

    def _accelerate_levels(self, level: str, blocks: dict):
        """``accelerate`` with output memory levels: the host level's copy runs one GLB tile per invocation. The
        fabric's stages (this Func and its GLB copy, the fabric's output) compute ``blocks``' dimensions n at a
        time; the host copy takes the GLB tile's channels in space."""
        fs = self.schedule
        names = [lv.name for lv in fs.levels]
        if level != names[1]:
            raise self._sched_error("accelerate", f"with output memory levels ({', '.join(names)}) the accelerator "
                                    f"is the '{names[1]}' level (one invocation per {names[1]} tile): "
                                    f"accelerate('{names[1]}'), as the thesis's get_memory_level('{names[1]}')"
                                    ".hw_accelerate")
        copies = fs.memory_levels
        x = self.dims[0].name
        host, glb = copies[names[2]], copies[names[1]]
        if loop_name(x, names[1]) not in host._stage_schedule.loops:
            raise self._sched_error("accelerate", f"level '{names[0]}' does not split '{x}'")
        host.hw_accelerate(loop_name(x, names[1]), loop_name(x, names[2]))
        for f in (self, glb, host):  # each GLB tile (the host's invocation) holds them all
            for d in f.dims[2:]:  # dimensions beyond x and y are computed in space, or in the fabric in blocks
                n = blocks.get(d.name) if f is not host else None
                loops = f._stage_schedule.loops
                if n and f is glb and d.name in loops:  # its blocks iterated inside the fabric's tile loop
                    at, now = loops.index(loop_name(x, names[1])), loops.index(d.name)
                    if now > at:
                        f.reorder(*loops[:at], d.name, *loops[at:now])
                if d.name in f._stage_schedule.loops:
                    f.unroll(d, n)
                elif f is glb and loop_name(d.name, names[0]) in f._stage_schedule.loops:
                    f.unroll(loop_name(d.name, names[0]), n)  # the fabric tile's channels (the fabric output's loop)
        fs.channel_blocks = blocks
        rate = fs.output_rate
        if rate is not None:
            if rate > 1:
                self._check_rate_fits(rate, fs.levels[0])
                self.unroll(self.dims[0], rate)
                glb.unroll(loop_name(x, names[0]), rate)
            for g in self._accelerated_funcs():
                _unroll_reductions(g)
        return self

    def get_memory_level(self, name: str):
        """The Func holding this Func's data at memory level ``name`` (``stream_to_accelerator`` made it)."""
        fs = self._func_schedule("get_memory_level")
        levels = getattr(fs, "memory_levels", {})
        if name not in levels:
            raise self._sched_error("get_memory_level", f"no memory level '{name}' (levels: "
                                    f"{', '.join(levels) or 'none; call stream_to_accelerator(levels, looplevels)'})")
        return levels[name]

    def _accelerated_funcs(self):
        """Funcs the accelerator of this Func computes: reachable without crossing a host input."""
        from .func import Func
        from .graph import FuncGraph

        graph = FuncGraph(self)
        out, todo, seen = [], [self], set()
        while todo:
            f = todo.pop()
            if id(f) in seen:
                continue
            seen.add(id(f))
            out.append(f)
            for p in graph.producers.get(id(f), []):
                if isinstance(p, Func) and not (p.schedule.stream_to_accelerator or p.schedule.accelerator_input):
                    todo.append(p)
        return out


def _space_dims(g, carried: dict) -> list:
    """Indices of a memory's dims computed in space (or in blocks): all but the two carrying the output's x and y,
    in that order (a channels-first ``g[o, x, y]`` read as ``g[o, x, y]`` iterates its dims 1 and 2 in time); its
    dims beyond the first two when the reads do not say."""
    pixels = sorted((p, j) for j, p in carried.items() if p in (0, 1))
    if [p for p, _ in pixels] == [0, 1] and pixels[0][1] < pixels[1][1]:
        return [j for j in range(len(g.dims)) if j not in (pixels[0][1], pixels[1][1])]
    return list(range(2, len(g.dims)))


def channel_blocks(f, channels, construct: str) -> dict:
    """A ``channels_per_cycle`` argument ({Var: n}, or n for ``f``'s one dimension beyond x and y) as
    {dimension name: n}, checked (``accelerate``, ``stream_through_accelerator``)."""
    if channels is None:
        return {}
    beyond = [d.name for d in f.dims[2:]]
    if isinstance(channels, int) and not isinstance(channels, bool):
        if len(beyond) != 1:
            raise f._sched_error(construct, f"channels_per_cycle={channels} names no dimension, and {f.name} has "
                                 f"{len(beyond)} beyond x and y ({', '.join(beyond) or 'none'}); give {{Var: n}}")
        channels = {beyond[0]: channels}
    if not isinstance(channels, dict):
        raise f._sched_error(construct, f"channels_per_cycle takes {{Var: n}} or an int, got {channels!r}")
    out = {}
    for v, n in channels.items():
        try:
            name = var_name(v)
        except TypeError:
            raise f._sched_error(construct, f"channels_per_cycle: expected a Var of {f.name}, got {v!r}") from None
        if name not in beyond:
            what = (f"'{name}' is {f.name}'s {'x' if name == f.dims[0].name else 'y'} (pixels and rows a step: "
                    "output_rate, unroll)" if name in [d.name for d in f.dims[:2]] else
                    f"'{name}' is not a dimension of {f.name}")
            raise f._sched_error(construct, f"channels_per_cycle: {what}; it takes dimensions beyond x and y "
                                 f"({', '.join(beyond) or 'none'})")
        if not isinstance(n, int) or isinstance(n, bool) or n < 1:
            raise f._sched_error(construct, f"channels_per_cycle of '{name}' must be a positive int, got {n!r}")
        out[name] = n
    return out


_FABRIC_MEMORIES = tuple(m for m in MemoryType.ALL if m not in (MemoryType.GLB, "Host"))


def _consumer_rate(looplevels) -> int | None:
    """The output_rate of the Func whose loops the copies are computed at (or of the Func it copies, for an output
    memory level): a stream copy must deliver what the accelerator consumes a cycle."""
    for lv in looplevels:
        f = lv.func
        while f is not None:
            if f.schedule.output_rate is not None:
                return f.schedule.output_rate
            f = getattr(f, "wrapped", None)
    return None


def _listed_first(level, dims) -> list:
    """``dims`` in the order ``level`` lists them, unlisted ones after (as iteration_order orders a level)."""
    listed = [v for v, _ in level.loops if v in dims]
    return listed + [d for d in dims if d not in listed]


def _output_levels(fs) -> dict:
    """Level name -> copy, for a Func whose iteration_order made output memory levels (else empty)."""
    names = [lv.name for lv in fs.levels]
    return fs.memory_levels if names and list(fs.memory_levels) == names else {}


def _memory_level_names(f, levels) -> bool:
    """Whether ``levels`` build output memory levels (a GLB level between the fabric tile and the host);
    refuses orders no hierarchy has: the GLB innermost or outermost, a memory-tile level outside the fabric
    tile, more than one level between the fabric tile and the host."""
    names = [lv.name for lv in levels]
    if MemoryType.GLB not in names:
        return False
    k = names.index(MemoryType.GLB)
    if k == 0 or k == len(names) - 1:
        where = "innermost" if k == 0 else "outermost"
        raise f._sched_error("iteration_order", f"level order {names} cannot exist: the GLB level is the {where}; "
                             "it sits between the fabric's tiles (inner) and the host (outer), e.g. "
                             "[IterLevel('CGRA', ...), IterLevel('GLB', ...), IterLevel('host')]")
    inside = [n for n in names[1:-1] if n in _FABRIC_MEMORIES]
    if inside:
        raise f._sched_error("iteration_order", f"level order {names} cannot exist: '{inside[0]}' is outside the "
                             "fabric tile, but memory tiles, ponds and ROMs are inside the fabric")
    if len(names) != 3:
        raise f._sched_error("iteration_order", f"output memory levels are fabric tile -> GLB -> host; got "
                             f"{len(names)} levels {names}")
    return True


def _unroll_reductions(f) -> None:
    for i, d in enumerate(f.updates):
        stage = f.update(i)
        for rv in d.rvars:
            stage.unroll(rv)


__all__ = ["IterLevel", "DeclarativeMixin", "loop_name", "channel_blocks"]
