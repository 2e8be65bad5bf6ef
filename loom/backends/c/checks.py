"""Checked mode: run-time index, slice and division checks in the generated C.

Division checks are always on: a module with a run-time integer divisor gets the
guarded entry below even when not in checked mode (``emitter.has_unsafe_division``),
with only its divisions checked. The rest is opt-in
(``compile_module(..., checked=True)`` or ``LOOM_CHECK_BOUNDS=1``). Every
memref/affine load and store checks each index against its dimension, every
subview checks its slice lies within the source, memref.copy checks the shapes
agree, and integer division/remainder checks for a zero divisor (signed ``MIN / -1``
wraps to ``MIN`` as in numpy: ``emit_scalar``).

Mechanism: each defined function ``f`` becomes ``static loomc_f(loomh_ctx *, ...)``;
the exported symbol ``loom_f`` is a wrapper taking one extra trailing pointer to a
``loomh_status`` owned by the caller. The wrapper ``setjmp``s; the first failed
check writes the status (kind, site, dimension, values) and ``longjmp``s back,
and the wrapper frees the heap buffers still live (tracked in a list) and
returns. Python then raises a ``LoomError`` located at the op's source
position, looked up by site number in the module's ``Site`` table.
"""

from __future__ import annotations

import ctypes
import os
from dataclasses import dataclass

from xdsl.dialects.builtin import FileLineColLoc
from xdsl.ir import Operation

from loom.dialects.check_note import check_note
from loom.errors import LoomError

CTX = "loomh_ck"  # name of the context parameter of checked function bodies

KIND_INDEX, KIND_SLICE, KIND_DIV_ZERO, KIND_COPY_SHAPE = 1, 2, 3, 5  # 4 was MIN / -1, which now wraps

CHECK_PRELUDE = r"""
/* ---- checked mode (LOOM_CHECK_BOUNDS) ---- */
#include <setjmp.h>
#if defined(__GNUC__)
#define LOOMH_NORETURN __attribute__((noreturn, cold))
#else
#define LOOMH_NORETURN
#endif
/* Written by the first failed check; owned by the caller of the exported wrapper. */
typedef struct { int64_t failed, site, dim, a, b, c, size; void *blocks; } loomh_status;
typedef struct { loomh_status *status; jmp_buf env; } loomh_ctx;
/* Header of a tracked heap buffer: buffers still live when a check fails are freed by the wrapper. */
typedef union loomh_block { struct { union loomh_block *prev, *next; } link; long double align; } loomh_block;

static void loomh_fail(loomh_ctx *ck, int64_t kind, int64_t site, int64_t dim, int64_t a, int64_t b, int64_t c,
                       int64_t size) LOOMH_NORETURN;
static void loomh_fail(loomh_ctx *ck, int64_t kind, int64_t site, int64_t dim, int64_t a, int64_t b, int64_t c,
                       int64_t size) {
  loomh_status *st = ck->status;
  st->failed = kind; st->site = site; st->dim = dim; st->a = a; st->b = b; st->c = c; st->size = size;
  longjmp(ck->env, 1);
}
/* Unsigned compare: a negative index is out of range too. */
static inline void loomh_check_index(loomh_ctx *ck, int64_t site, int64_t dim, intptr_t i, intptr_t n) {
  if ((uintptr_t)i >= (uintptr_t)n) loomh_fail(ck, 1, site, dim, i, 0, 0, n);
}
/* A slice [off, off + (count-1)*step] of a dimension of size n (wrapping arithmetic: no UB). */
static inline void loomh_check_slice(loomh_ctx *ck, int64_t site, int64_t dim, intptr_t off, intptr_t count,
                                     intptr_t step, intptr_t n) {
  if (count < 0 || (count > 0 && ((uintptr_t)off >= (uintptr_t)n
      || (uintptr_t)off + ((uintptr_t)count - 1u) * (uintptr_t)step >= (uintptr_t)n)))
    loomh_fail(ck, 2, site, dim, off, count, step, n);
}
static inline void loomh_check_divisor(loomh_ctx *ck, int64_t site, int nonzero) {
  if (!nonzero) loomh_fail(ck, 3, site, 0, 0, 0, 0, 0);
}
static inline void loomh_check_same_size(loomh_ctx *ck, int64_t site, int64_t dim, intptr_t src, intptr_t dst) {
  if (src != dst) loomh_fail(ck, 5, site, dim, src, dst, 0, 0);
}
static void *loomh_alloc_tracked(loomh_ctx *ck, intptr_t count, size_t elem) {
  loomh_block *b = (loomh_block *)malloc(sizeof(loomh_block) + (count > 0 ? (size_t)count : 1) * elem);
  loomh_block *head = (loomh_block *)ck->status->blocks;
  if (!b) abort();
  b->link.prev = NULL;
  b->link.next = head;
  if (head) head->link.prev = b;
  ck->status->blocks = b;
  return b + 1;
}
static void loomh_free_tracked(loomh_ctx *ck, void *p) {
  loomh_block *b = (loomh_block *)p - 1;
  if (b->link.prev) b->link.prev->link.next = b->link.next;
  else ck->status->blocks = b->link.next;
  if (b->link.next) b->link.next->link.prev = b->link.prev;
  free(b);
}
static void loomh_free_all(loomh_status *st) {
  while (st->blocks) {
    loomh_block *b = (loomh_block *)st->blocks;
    st->blocks = b->link.next;
    free(b);
  }
}
"""


def checks_requested(checked: bool | None) -> bool:
    """``checked=None`` follows the environment (``LOOM_CHECK_BOUNDS=1``)."""
    if checked is None:
        return os.environ.get("LOOM_CHECK_BOUNDS", "") == "1"
    return checked


@dataclass(frozen=True)
class Site:
    """Where a check sits: the op's name, its function and its source location (if any)."""

    op_name: str
    func: str
    filename: str | None
    line: int | None
    column: int | None
    what: str | None = None  # what the op computes for the user (``loom.check``), e.g. a range's length


def site_of(op: Operation, func: str) -> Site:
    loc = getattr(op, "location", None)
    what = check_note(op)
    if isinstance(loc, FileLineColLoc):
        return Site(op.name, func, loc.filename.data, loc.line.data, loc.column.data, what)
    return Site(op.name, func, None, None, None, what)


class Status(ctypes.Structure):
    """ctypes twin of ``loomh_status``."""

    _fields_ = [(name, ctypes.c_int64) for name in ("failed", "site", "dim", "a", "b", "c", "size")] + [
        ("blocks", ctypes.c_void_p)
    ]


def failure_message(status: Status, site: Site) -> str:
    kind, op = status.failed, site.op_name
    if kind == KIND_INDEX:
        return f"index {status.a} out of range for dimension {status.dim} of size {status.size} in {op}"
    if kind == KIND_SLICE:
        return (f"slice offset {status.a}, size {status.b}, stride {status.c} out of range for dimension "
                f"{status.dim} of size {status.size} in {op}")
    if kind == KIND_DIV_ZERO:
        return f"integer division by zero in {op}"
    if kind == KIND_COPY_SHAPE:
        return (f"shape mismatch in {op}: dimension {status.dim} has size {status.a} in the source "
                f"and {status.b} in the target")
    return f"unknown check failure (kind {kind}) in {op}"


def failure_error(status: Status, sites: tuple[Site, ...]) -> LoomError:
    """The LoomError for a failed status, located at the op's source position."""
    if not 0 <= status.site < len(sites):
        return LoomError(f"check failure at unknown site {status.site}")
    site = sites[status.site]
    message = failure_message(status, site)
    if site.what is not None:
        message = f"{site.what} ({message})"
    if site.filename is not None:
        return LoomError(message, filename=site.filename, line=site.line, column=site.column)
    return LoomError(message, where=f"'{site.op_name}' in @{site.func}")
