"""Schedule primitives recorded on Funcs and update stages.

Loops are listed innermost first (Halide's convention). Primitives check what
they can at once (unknown or duplicate variable names); checks that need the
whole pipeline (``compute_at`` on a loop outside the consumer's nest, store
level inside the compute level) run in ``graph.validate_schedules``. Every
error is a ``LoomError`` naming the Func and the primitive.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass

from loom.errors import LoomError

from .location import user_location


def _factor(stage, primitive: str, factor) -> int:
    """A split factor: a positive int (numpy's too) below 2**31, as Halide's i32 loop extents; not a bool."""
    if isinstance(factor, bool) or not isinstance(factor, numbers.Integral) or not 0 < factor < 2 ** 31:
        raise stage._sched_error(primitive, f"factor must be a positive int, got {factor!r} (below 2**31: "
                                            "Halide's loop extents are i32)")
    return int(factor)


class MemoryType:
    """Memory kinds for ``store_in`` (thesis §3.5)."""

    Host = "Host"
    GLB = "GLB"
    MemoryTile = "MemoryTile"
    Pond = "Pond"
    ROM = "ROM"
    Register = "Register"
    ALL = ("Host", "GLB", "MemoryTile", "Pond", "ROM", "Register")


def var_name(v) -> str:
    if isinstance(v, str):
        return v
    name = getattr(v, "name", None)
    if not isinstance(name, str):
        raise TypeError(f"expected a Var, RVar or name, got {v!r}")
    return name


class TailStrategy:
    """What a split does when the factor does not divide the extent (Halide's ``TailStrategy``).

    ``RoundUp``: compute up to a multiple of the factor (the Func's region grows, and so what it reads:
    an input too small is an error, as in Halide). ``GuardWithIf``: skip the points past the end.
    ``ShiftInwards``: shift the last tile inward, recomputing a few points (pure definitions only).
    ``PredicateLoads`` / ``PredicateStores``: RoundUp's footprint on the CPU (loom does not vectorize the
    tail). ``Auto``: ShiftInwards for pure definitions, GuardWithIf for updates."""

    Auto = "Auto"
    RoundUp = "RoundUp"
    GuardWithIf = "GuardWithIf"
    ShiftInwards = "ShiftInwards"
    PredicateLoads = "PredicateLoads"
    PredicateStores = "PredicateStores"
    ALL = (Auto, RoundUp, GuardWithIf, ShiftInwards, PredicateLoads, PredicateStores)
    ROUNDING = (RoundUp, PredicateLoads, PredicateStores)  # computed over the region rounded up

    @staticmethod
    def resolve(tail: str, pure: bool) -> str:
        if tail == TailStrategy.Auto:
            return TailStrategy.ShiftInwards if pure else TailStrategy.GuardWithIf
        return tail


@dataclass(frozen=True)
class LoopLevel:
    """Halide's LoopLevel: a loop of a Func (``compute_at(level)``), or the root (``LoopLevel.root()``)."""

    func: object
    var: str

    @staticmethod
    def root() -> "LoopLevel":
        return LoopLevel(None, "__root__")

    @property
    def is_root(self) -> bool:
        return self.func is None


@dataclass
class Split:
    old: str
    outer: str
    inner: str
    factor: int
    tail: str = TailStrategy.Auto


@dataclass
class Fuse:
    inner: str
    outer: str
    fused: str


class StageSchedule:
    """Loop structure of one definition: splits, order and unrolling."""

    def __init__(self, definition, loops: list[str]):
        self.definition = definition
        self.loops = list(loops)  # innermost first
        self.splits: list[Split] = []
        self.fuses: list[Fuse] = []  # applied after every split (see ``fuse``)
        self.reorders: list[tuple] = []  # each reorder call as written (not tile's), so a flow can refuse it
        self.unrolled: dict[str, int | None] = {}  # loop -> factor (None: the whole loop)
        # no effect on values; kept so that a flow with no use for them can refuse them (streaming/extract.py)
        self.vectorized: dict[str, int | None] = {}  # loop -> the factor that split it off (None: a loop as written)
        self.parallel: list[str] = []
        self.locations: dict[str, tuple] = {}  # unroll / vectorize / parallel -> (file, line) of its last call


class FuncSchedule:
    """Func-level schedule: where it is computed and stored, bounds, accelerator marks."""

    def __init__(self, func):
        self.func = func
        self.compute_level = None  # None (inline) | "root" | (Func, loop name)
        self.store_level = None
        self.locations: dict[str, tuple] = {}  # primitive -> (file, line) of its last call
        self.bounds: dict[str, tuple[int, int]] = {}
        self.memory_type: str | None = None
        self.hw_accelerate: tuple[str, str] | None = None
        self.stream_to_accelerator = False
        self.accelerator_input = False
        self.levels: list = []  # IterLevels of iteration_order (declarative.py), innermost first
        self.output_rate: int | None = None  # outputs per cycle (declarative.py)
        self.memory_levels: dict = {}  # level name -> Func holding the data there (declarative.py)
        self.channel_blocks: dict[str, int] = {}  # dimension -> channels a cycle (declarative accelerate)
        self.memories: list = []  # the Funcs create_memories computed in this Func's loops (declarative.py)
        # compute sharing (thesis §5): the root of a share group records its interleaving loop,
        # every other member the root it time-multiplexes the hardware kernel with
        self.share_level: str | None = None
        self.share_root = None
        # the Funcs that called compute_share(this Func): one outside the pipeline is found by none of its walks
        self.share_callers: list = []


def _tail(owner, tail) -> str:
    if tail not in TailStrategy.ALL:
        raise owner._sched_error("split", f"unknown tail strategy {tail!r}; expected one of "
                                 f"{', '.join('TailStrategy.' + t for t in TailStrategy.ALL)}")
    return tail


def loop_roots(stage_schedule, loop: str) -> set[str]:
    """The Vars and RVars of the definition that ``loop`` iterates (through splits and fuses)."""
    for fz in stage_schedule.fuses:
        if loop == fz.fused:
            return loop_roots(stage_schedule, fz.inner) | loop_roots(stage_schedule, fz.outer)
    origin = loop
    for sp in reversed(stage_schedule.splits):
        if origin in (sp.outer, sp.inner):
            origin = sp.old
    return {origin}


def is_pure_var(stage_schedule, loop: str) -> bool:
    """Whether ``loop`` of an update definition derives from a pure Var (not from an RVar)."""
    names = {r.name for r in stage_schedule.definition.rvars}
    return not loop_roots(stage_schedule, loop) & names


def loop_directives(f, kinds):
    """(``f`` or ``f.update(i)``, the call as written, its kind) of each of ``kinds`` (unroll, vectorize,
    parallel, split: a split or tile not made by unroll(v, n), fuse, reorder: a reorder call, not tile's)
    in ``f``'s definitions."""
    for d in f.definitions:
        what = f.name if d.is_pure else f"{f.name}.update({d.index - 1})"
        sched = d.schedule
        if "unroll" in kinds:
            for name, factor in sched.unrolled.items():
                loop = name[:-2] if factor is not None and name.endswith("_u") else name  # unroll(v, n) splits v
                yield what, f"unroll({loop})" if factor is None else f"unroll({loop}, {factor})", "unroll"
        if "vectorize" in kinds:
            for name, width in sched.vectorized.items():
                loop = name if width is None else next(sp.old for sp in sched.splits if sp.inner == name)
                yield what, f"vectorize({loop})" if width is None else f"vectorize({loop}, {width})", "vectorize"
        if "parallel" in kinds:
            for name in sched.parallel:
                yield what, f"parallel({name})", "parallel"
        if "split" in kinds:  # not those unroll(v, n) and vectorize(v, n) make
            for sp in sched.splits:
                if sp.inner not in sched.unrolled and sched.vectorized.get(sp.inner) is None:
                    yield what, f"split({sp.old}, {sp.outer}, {sp.inner}, {sp.factor}) (a split or tile)", "split"
        if "fuse" in kinds:
            for fz in sched.fuses:
                yield what, f"fuse({fz.inner}, {fz.outer}, {fz.fused})", "fuse"
        if "reorder" in kinds:
            for names in sched.reorders:
                yield what, f"reorder({', '.join(names)})", "reorder"


def refuse_loops_of_inlined(funcs, output):
    """Halide refuses unroll, vectorize and parallel on a Func scheduled inline (no compute level, no update
    definition): it has no loops of its own ("Cannot vectorize dimension x of function f because the function
    is scheduled inline"). Its split, fuse and reorder Halide accepts and ignores (split with a warning)."""
    verbs = {"unroll": "unroll", "vectorize": "vectorize", "parallel": "parallelize"}
    for f in funcs:
        if f is output or f.schedule.compute_level is not None or f.updates or getattr(f, "components", None):
            continue
        for what, call, directive in loop_directives(f, tuple(verbs)):
            loop = call[call.index("(") + 1:].split(",")[0].rstrip(")")
            filename, line = f.pure.schedule.locations.get(directive, (None, None))
            raise LoomError(f"{what}.{call}: cannot {verbs[directive]} dimension {loop} of function '{f.name}' "
                            "because the function is scheduled inline (Halide refuses it too: an inlined Func has "
                            f"no loops); compute it first, e.g. {f.name}.compute_root() or "
                            f"{f.name}.compute_at(consumer, loop), or drop the {directive}",
                            where=f"Func '{f.name}'", construct=directive, filename=filename, line=line)


class UnknownPrimitive(LoomError, AttributeError):
    """``getattr`` of a name a Func or Stage does not have (hasattr still works: it is an AttributeError)."""


class ScheduleMixin:
    """Primitives shared by Func (its pure stage) and Stage (an update)."""

    # subclasses provide _stage_schedule and _owner_name

    def __getattr__(self, name: str):
        """An unknown schedule primitive (``f.frobnicate(x)``) is a located LoomError (still an AttributeError)."""
        if name.startswith("_") or name == "name":  # private, or read by _owner_name: plain AttributeError
            raise AttributeError(name)

        known = sorted(n for n in dir(type(self)) if not n.startswith("_"))
        filename, line = user_location()
        raise UnknownPrimitive(f"no schedule primitive or attribute '{name}'; known: {', '.join(known)}",
                               filename=filename, line=line, where=f"'{self._owner_name}'")

    def _sched_error(self, primitive: str, msg: str):
        filename, line = user_location()
        return LoomError(f"{primitive}: {msg}", filename=filename, line=line,
                         where=f"Func '{self._owner_name}'", construct=primitive)

    def _loop(self, primitive: str, v) -> str:
        name = var_name(v)
        loops = self._stage_schedule.loops
        if name not in loops:
            raise self._sched_error(primitive, f"unknown variable '{name}' (loops, innermost first: "
                                    f"{', '.join(loops)})")
        return name

    def split(self, old, outer, inner, factor: int, tail: str = TailStrategy.Auto):
        s = self._stage_schedule
        old_n = self._loop("split", old)
        tail = _tail(self, tail)
        if any(fz.fused == old_n for fz in s.fuses):
            raise self._sched_error("split", f"'{old_n}' is a fused loop; split before fusing")
        outer_n, inner_n = var_name(outer), var_name(inner)
        factor = _factor(self, "split", factor)
        for n in (outer_n, inner_n):
            if n in s.loops and n != old_n:
                raise self._sched_error("split", f"variable '{n}' already names a loop")
        if outer_n == inner_n:
            raise self._sched_error("split", "outer and inner variables must differ")
        pure = s.definition.is_pure
        if tail == TailStrategy.ShiftInwards and not pure:
            raise self._sched_error("split", f"ShiftInwards is not a legal tail strategy for '{old_n}' of an update "
                                    "definition (recomputing a point would apply the update twice); use "
                                    "GuardWithIf or RoundUp")
        if tail in TailStrategy.ROUNDING and not pure and not is_pure_var(s, old_n):
            raise self._sched_error("split", f"{tail} would run the reduction variable '{old_n}' past its extent; "
                                    "use GuardWithIf")
        i = s.loops.index(old_n)
        s.loops[i:i + 1] = [inner_n, outer_n]
        s.splits.append(Split(old_n, outer_n, inner_n, factor, tail))
        return self

    def fuse(self, inner, outer, fused):
        """One loop ``fused`` over ``inner``'s and ``outer``'s points (``inner`` varies fastest, as in
        Halide). ``inner`` must be the loop directly inside ``outer``; fusing does not change values."""
        s = self._stage_schedule
        inner_n, outer_n = self._loop("fuse", inner), self._loop("fuse", outer)
        fused_n = var_name(fused)
        i = s.loops.index(inner_n)
        if i + 1 >= len(s.loops) or s.loops[i + 1] != outer_n:
            raise self._sched_error("fuse", f"'{inner_n}' must be directly inside '{outer_n}' (loops, innermost "
                                    f"first: {', '.join(s.loops)}); reorder first")
        if fused_n in s.loops and fused_n not in (inner_n, outer_n):
            raise self._sched_error("fuse", f"variable '{fused_n}' already names a loop")
        if inner_n in s.unrolled or outer_n in s.unrolled:
            raise self._sched_error("fuse", "unroll after fusing, not before")
        s.loops[i:i + 2] = [fused_n]
        s.fuses.append(Fuse(inner_n, outer_n, fused_n))
        return self

    def reorder(self, *vars_):
        self._reorder(vars_)
        self._stage_schedule.reorders.append(tuple(var_name(v) for v in vars_))
        return self

    def _reorder(self, vars_):
        s = self._stage_schedule
        names = [self._loop("reorder", v) for v in vars_]
        if len(set(names)) != len(names):
            raise self._sched_error("reorder", f"variables repeated in {names}")
        positions = sorted(s.loops.index(n) for n in names)
        new_loops = list(s.loops)
        for p, n in zip(positions, names):
            new_loops[p] = n
        self._refuse_reordered_rvars(new_loops)
        s.loops[:] = new_loops
        return self

    def _refuse_reordered_rvars(self, loops):
        """Halide refuses to swap two RDom dimensions' loops unless the update is an associative reduction
        (``f = f op term``, op in + * min max): the points would be visited in another order, which changes
        e.g. ``f = f * 3 + term``."""
        s = self._stage_schedule
        d = s.definition
        dims = {r.name: i for i, r in enumerate(d.rvars)}  # innermost first, as the RDom nests them
        origin = {}
        for name in loops:
            root = name
            for sp in reversed(s.splits):
                if root in (sp.outer, sp.inner):
                    root = sp.old
            if root in dims:
                origin[name] = dims[root]
        order = [origin[n] for n in loops if n in origin]
        swapped = next(((a, b) for i, a in enumerate(order) for b in order[i + 1:] if a > b), None)
        if swapped is None:
            return
        from .rfactor import is_associative_update  # rfactor imports func, which imports this module

        if not is_associative_update(d):
            inner, outer = (d.rvars[i].name for i in swapped)
            raise self._sched_error("reorder", f"can't put the loop of RVar {inner} inside that of {outer}: the "
                                    "update is not an associative reduction (f = f op term, op in + * min max), "
                                    "so visiting the RDom in another order may change its meaning (Halide refuses "
                                    "it too)")

    def tile(self, x, y, xo, yo, xi, yi, fx: int, fy: int, tail: str = TailStrategy.Auto):
        self._loop("tile", x)
        self._loop("tile", y)  # check both before changing anything
        self.split(x, xo, xi, fx, tail)
        self.split(y, yo, yi, fy, tail)
        return self._reorder((xi, yi, xo, yo))

    def unroll(self, v, factor: int | None = None, tail: str = TailStrategy.Auto):
        name = self._loop("unroll", v)
        if factor is not None:
            inner = f"{name}_u"
            self.split(name, name, inner, factor, tail)
            self._stage_schedule.unrolled[inner] = factor
        else:
            self._stage_schedule.unrolled[name] = None
        self._stage_schedule.locations["unroll"] = user_location()
        return self

    def vectorize(self, v, factor: int | None = None, tail: str = TailStrategy.Auto):
        """Halide's ``vectorize(v[, factor[, tail]])``: with a factor, ``split(v, v, v_v, factor, tail)`` first (the
        outer loop keeps the name, as in Halide) and the inner loop ``v_v`` is the vectorized one. The CPU path runs
        a vectorized loop as a loop that gcc vectorizes (with the factor as its width hint)."""
        name = self._loop("vectorize", v)
        s = self._stage_schedule
        if factor is not None:
            if _tail(self, tail) == TailStrategy.ShiftInwards and not s.definition.is_pure:
                raise self._sched_error("vectorize", f"ShiftInwards is not a legal tail strategy for '{name}' of an "
                                        "update definition; use GuardWithIf or RoundUp")
            factor = _factor(self, "vectorize", factor)
            if any(fz.fused == name for fz in s.fuses):
                raise self._sched_error("vectorize", f"'{name}' is a fused loop, which loom cannot split by {factor} "
                                        f"(Halide can); vectorize before fusing, or vectorize({name}) whole")
            inner = next(n for n in (f"{name}_v{k or ''}" for k in range(len(s.loops) + 1)) if n not in s.loops)
            self.split(name, name, inner, factor, tail)
            name = inner
        s.vectorized[name] = factor
        s.locations["vectorize"] = user_location()
        return self

    def parallel(self, v, task_size: int | None = None, tail: str = TailStrategy.Auto):
        """Halide's ``parallel(v[, task_size[, tail]])``: with a task size, ``v`` is split by it first and its
        outer loop (still named ``v``) is the parallel one."""
        name = self._loop("parallel", v)
        if task_size is not None:
            self.split(name, name, f"{name}_p", task_size, tail)
        self._stage_schedule.parallel.append(name)
        self._stage_schedule.locations["parallel"] = user_location()
        return self

    # Func-only primitives ------------------------------------------------
    def _func_schedule(self, primitive: str) -> FuncSchedule:
        sched = getattr(self, "schedule", None)
        if getattr(self, "components", None):  # a Tuple-valued Func (tuples.py)
            raise self._sched_error(primitive, f"{self._owner_name} is Tuple-valued: schedule its elements, "
                                    f"e.g. {self._owner_name}.components[0].{primitive}(...)")
        if not isinstance(sched, FuncSchedule):
            raise self._sched_error(primitive, "applies to a Func, not to an update stage")
        return sched

    def bound(self, v, min_: int, extent: int):
        fs = self._func_schedule("bound")
        name = var_name(v)
        if name not in [d.name for d in self.dims]:
            raise self._sched_error("bound", f"unknown variable '{name}' (pure variables: "
                                    f"{', '.join(d.name for d in self.dims)})")
        if not isinstance(min_, int) or not isinstance(extent, int) or extent <= 0:
            raise self._sched_error("bound", f"needs constant int min and positive extent, got {min_}, {extent}")
        fs.bounds[name] = (min_, extent)
        return self

    def compute_root(self):
        fs = self._func_schedule("compute_root")
        fs.compute_level = "root"
        if fs.store_level is None:
            fs.store_level = "root"
        return self

    def compute_inline(self):
        fs = self._func_schedule("compute_inline")
        fs.compute_level = fs.store_level = None
        return self

    def _level(self, primitive, func, v):
        from .func import Func
        if not isinstance(func, Func) or v is None:
            raise self._sched_error(primitive, f"expects a Func and one of its loop variables, or a LoopLevel, "
                                    f"got {func!r}")
        if func is self:
            raise self._sched_error(primitive, f"'{func.name}' is this Func: a Func cannot be "
                                    "computed or stored at a loop of its own (compute it at a loop of a Func "
                                    "that reads it, or at the root)")
        if func.components:
            raise self._sched_error(primitive, f"'{func.name}' is Tuple-valued, and loom realises its elements in "
                                    f"loop nests of their own (Halide in one): compute at a loop of the element "
                                    f"that reads it, e.g. {primitive}({func.name}.components[0], "
                                    f"{var_name(v)}), or compute_root()")
        return (func, var_name(v))

    def compute_at(self, func, v=None):
        """``compute_at(f, v)`` or ``compute_at(level)`` with a ``LoopLevel``."""
        fs = self._func_schedule("compute_at")
        if isinstance(func, LoopLevel) and v is None:
            if func.is_root:
                return self.compute_root()
            func, v = func.func, func.var
        fs.compute_level = self._level("compute_at", func, v)
        fs.locations["compute_at"] = user_location()
        if fs.store_level is None:
            fs.store_level = fs.compute_level
        return self

    def store_at(self, func, v=None):
        fs = self._func_schedule("store_at")
        if isinstance(func, LoopLevel) and v is None:
            if func.is_root:
                return self.store_root()
            func, v = func.func, func.var
        fs.store_level = self._level("store_at", func, v)
        fs.locations["store_at"] = user_location()
        return self

    def store_root(self):
        self._func_schedule("store_root").store_level = "root"
        return self

    def store_in(self, memory_type: str):
        fs = self._func_schedule("store_in")
        if memory_type not in MemoryType.ALL:
            raise self._sched_error("store_in", f"unknown memory type {memory_type!r}; expected one of "
                                    f"{', '.join(MemoryType.ALL)}")
        fs.memory_type = memory_type
        return self

    def in_(self, consumer=None):
        """A copy stage: every other consumer of this Func reads the copy instead (Halide's ``in()``); with
        ``consumer``, a copy that only that Func reads (Halide's ``in(g)``)."""
        self._func_schedule("in_")
        from .func import Func
        if consumer is not None:
            if not isinstance(consumer, Func):
                raise self._sched_error("in_", f"in_(consumer) takes the Func that reads the copy, got "
                                        f"{type(consumer).__name__}")
            if id(consumer) not in self.consumer_wrappers:
                w = Func(f"{self.name}_in_{consumer.name}")
                w[tuple(self.dims)] = self[tuple(self.dims)]
                w.wrapped = self
                self.consumer_wrappers[id(consumer)] = w
            return self.consumer_wrappers[id(consumer)]
        if self.wrapper is None:
            w = Func(f"{self.name}_in")
            w[tuple(self.dims)] = self[tuple(self.dims)]
            w.wrapped = self
            self.wrapper = w
        return self.wrapper

    def hw_accelerate(self, xi, xo):
        fs = self._func_schedule("hw_accelerate")
        xi_n = self._loop("hw_accelerate", xi)
        xo_n = self._loop("hw_accelerate", xo)
        loops = self._stage_schedule.loops
        if loops.index(xi_n) >= loops.index(xo_n):
            raise self._sched_error("hw_accelerate", f"'{xi_n}' must be a loop inside '{xo_n}' (loops, "
                                    f"innermost first: {', '.join(loops)})")
        fs.hw_accelerate = (xi_n, xo_n)
        if fs.compute_level is None:
            fs.compute_level = fs.store_level = "root"
        return self

    def stream_to_accelerator(self):
        fs = self._func_schedule("stream_to_accelerator")
        fs.stream_to_accelerator = True
        if fs.compute_level is None:
            fs.compute_level = fs.store_level = "root"
        return self

    def compute_share_root(self, v):
        """Make this Func's kernel the hardware kernel a share group time-multiplexes (thesis §5.1).

        ``v`` is the interleaving level: this Func's innermost Var (a pixel of every member in
        turn), its second Var (a line each) or the accelerator's outer loop (a whole block each),
        as a name or a LoopLevel (``out.get_looplevel("CGRA", x)``)."""
        fs = self._func_schedule("compute_share_root")
        if isinstance(v, LoopLevel):
            if v.is_root:
                raise self._sched_error("compute_share_root", "takes the loop one accelerator tile is computed at "
                                        "(e.g. out.get_looplevel('CGRA', x)) or this Func's x or y, not the root")
            v = v.var
        try:
            fs.share_level = var_name(v)
        except TypeError:
            raise self._sched_error("compute_share_root", f"expects a Var, a loop name or a LoopLevel, got {v!r}")
        fs.share_root = None
        fs.locations["compute_share_root"] = user_location()
        return self

    def compute_share(self, root):
        """Compute this Func on ``root``'s hardware kernel (``root.compute_share_root(level)``)."""
        fs = self._func_schedule("compute_share")
        if not hasattr(root, "schedule") or not isinstance(root.schedule, FuncSchedule):
            raise self._sched_error("compute_share", f"expects the root Func of a share group, got {root!r}")
        if root is self:
            raise self._sched_error("compute_share", "a Func cannot share its kernel with itself; "
                                    "use compute_share_root(level) on the group's root")
        fs.share_root = root
        fs.share_level = None
        fs.locations["compute_share"] = user_location()
        if not any(f is self for f in root.schedule.share_callers):
            root.schedule.share_callers.append(self)
        return self

    def accelerator_input(self):
        fs = self._func_schedule("accelerator_input")
        fs.accelerator_input = True
        if fs.compute_level is None:
            fs.compute_level = fs.store_level = "root"
        return self
