"""Checks inside an OpenMP region: recorded, reported after the region.

A check of the guarded entry (``checks``) that fails ``longjmp``s to the exported wrapper; a jump may not leave
an OpenMP region. Inside one (the outermost ``scf.parallel`` of a guarded function, emitted with its pragma),
each check is instead ``if (<fails>) { loomh_defer(...); goto <end of the iteration>; }``: the failure is
recorded in a ``loomh_pending`` slot shared by the threads (the earliest iteration's wins, so the error is the
one a serial run gives), the rest of that iteration is skipped (its out-of-range access never runs), the other
iterations finish, and ``loomh_report`` after the region raises it. A heap buffer made inside the region goes
on a list of its iteration's own (the function's list is not shared between threads), freed when the iteration
stops early. The loop keeps its threads: a gather with a data-placed index, a division by a run-time divisor or
a scratch buffer per iteration no longer makes it serial.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from loom.backends.c.checks import KIND_ALLOC, KIND_COPY_SHAPE, KIND_DIV_ZERO, KIND_INDEX, KIND_SLICE


@dataclass
class OmpRegion:
    """The OpenMP loop being emitted: its pending slot, end-of-iteration label, induction variables, and the
    heap buffers list of an iteration (when it allocates)."""

    pending: str
    label: str
    ivs: list[str]
    local: str
    buffers: set[str] = field(default_factory=set)  # pointers allocated inside the region (on ``local``)
    used: bool = False  # a check or a buffer was emitted inside: the slot, label and report are needed


def failure_test(helper: str, args: tuple) -> tuple[int, str, tuple]:
    """(kind, C condition that the check fails, status fields dim, a, b, c, size) of a ``loomh_check_*`` call's
    arguments after the site (as ``FunctionEmitter.check`` takes them)."""
    if helper == "loomh_check_index":
        dim, i, n = args
        return KIND_INDEX, f"loomh_bad_index({i}, {n})", (dim, i, 0, 0, n)
    if helper == "loomh_check_slice":
        dim, off, count, step, n = args
        return KIND_SLICE, f"loomh_bad_slice({off}, {count}, {step}, {n})", (dim, off, count, step, n)
    if helper == "loomh_check_divisor":
        (nonzero,) = args
        return KIND_DIV_ZERO, f"!({nonzero})", (0, 0, 0, 0, 0)
    if helper == "loomh_check_same_size":
        dim, src, dst = args
        return KIND_COPY_SHAPE, f"({src}) != ({dst})", (dim, src, dst, 0, 0)
    raise ValueError(f"no deferred form for {helper}")


def defer_call(region: OmpRegion, kind: int, site: int, fields: tuple) -> str:
    region.used = True
    ivs = ", ".join(region.ivs)
    values = ", ".join(str(f) for f in fields)
    return (f"loomh_defer(&{region.pending}, {len(region.ivs)}, (const intptr_t[]){{{ivs}}}, {kind}, {site}, "
            f"{values}); goto {region.label};")


def deferred_check(region: OmpRegion, helper: str, site: int, args: tuple) -> str:
    kind, fails, fields = failure_test(helper, args)
    return f"if ({fails}) {{ {defer_call(region, kind, site, fields)} }}"


def deferred_alloc(region: OmpRegion, ctype: str, ptr: str, count: object, site: int) -> list[str]:
    """A heap buffer inside the region: on its iteration's list; a failed malloc is recorded like a check."""
    region.buffers.add(ptr)
    refused = "" if isinstance(count, int) else f"{count} < 0 ? NULL : "  # a negative size: refused
    return [f"{ctype} *{ptr} = {refused}({ctype} *)loomh_block_alloc(&{region.local}, {count}, sizeof({ctype}));",
            f"if (!{ptr}) {{ {defer_call(region, KIND_ALLOC, site, (0, count, f'(int64_t)sizeof({ctype})', 0, 0))} }}"]
