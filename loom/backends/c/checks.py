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

KIND_INDEX, KIND_SLICE, KIND_DIV_ZERO, KIND_COPY_SHAPE, KIND_ALLOC = 1, 2, 3, 5, 6  # 4 was MIN / -1: now wraps

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
static inline int loomh_bad_index(intptr_t i, intptr_t n) { return (uintptr_t)i >= (uintptr_t)n; }
/* A slice [off, off + (count-1)*step] of a dimension of size n (wrapping arithmetic: no UB). */
static inline int loomh_bad_slice(intptr_t off, intptr_t count, intptr_t step, intptr_t n) {
  return count < 0 || (count > 0 && ((uintptr_t)off >= (uintptr_t)n
      || (uintptr_t)off + ((uintptr_t)count - 1u) * (uintptr_t)step >= (uintptr_t)n));
}
static inline void loomh_check_index(loomh_ctx *ck, int64_t site, int64_t dim, intptr_t i, intptr_t n) {
  if (loomh_bad_index(i, n)) loomh_fail(ck, 1, site, dim, i, 0, 0, n);
}
static inline void loomh_check_slice(loomh_ctx *ck, int64_t site, int64_t dim, intptr_t off, intptr_t count,
                                     intptr_t step, intptr_t n) {
  if (loomh_bad_slice(off, count, step, n)) loomh_fail(ck, 2, site, dim, off, count, step, n);
}
static inline void loomh_check_divisor(loomh_ctx *ck, int64_t site, int nonzero) {
  if (!nonzero) loomh_fail(ck, 3, site, 0, 0, 0, 0, 0);
}
static inline void loomh_check_same_size(loomh_ctx *ck, int64_t site, int64_t dim, intptr_t src, intptr_t dst) {
  if (src != dst) loomh_fail(ck, 5, site, dim, src, dst, 0, 0);
}
/* Heap buffers on a list (head *head): the wrapper frees the function's buffers still live when a check fails,
   a parallel iteration its own when it stops early. NULL when malloc fails or the size does not fit in size_t. */
static void *loomh_block_alloc(void **head, intptr_t count, size_t elem) {
  size_t n = count > 0 ? (size_t)count : 1;
  if (elem && n > (SIZE_MAX - sizeof(loomh_block)) / elem) return NULL;
  loomh_block *b = (loomh_block *)malloc(sizeof(loomh_block) + n * elem);
  if (!b) return NULL;
  b->link.prev = NULL;
  b->link.next = (loomh_block *)*head;
  if (*head) ((loomh_block *)*head)->link.prev = b;
  *head = b;
  return b + 1;
}
static void loomh_block_free(void **head, void *p) {
  loomh_block *b = (loomh_block *)p - 1;
  if (b->link.prev) b->link.prev->link.next = b->link.next;
  else *head = b->link.next;
  if (b->link.next) b->link.next->link.prev = b->link.prev;
  free(b);
}
static void loomh_block_free_all(void **head) {
  while (*head) {
    loomh_block *b = (loomh_block *)*head;
    *head = b->link.next;
    free(b);
  }
}
/* Elements of a buffer with these dims: a negative dim itself (refused), INTPTR_MAX when the product does not
   fit (no malloc gives that much: refused too), else the product. */
static inline intptr_t loomh_elements(int rank, const intptr_t *dims) {
  intptr_t n = 1;
  for (int k = 0; k < rank; k++)
    if (dims[k] < 0) return dims[k];
  for (int k = 0; k < rank; k++) {
    if (dims[k] == 0) return 0;
    if (n > INTPTR_MAX / dims[k]) return INTPTR_MAX;
    n *= dims[k];
  }
  return n;
}
/* A failed allocation is a check failure (kind 6): count elements of elem bytes at the alloc's site (a
   negative count: a negative size). */
static void *loomh_alloc_tracked(loomh_ctx *ck, int64_t site, intptr_t count, size_t elem) {
  void *p = count < 0 ? NULL : loomh_block_alloc(&ck->status->blocks, count, elem);
  if (!p) loomh_fail(ck, 6, site, 0, count, (int64_t)elem, 0, 0);
  return p;
}
static void loomh_free_tracked(loomh_ctx *ck, void *p) { loomh_block_free(&ck->status->blocks, p); }
static void loomh_free_all(loomh_status *st) { loomh_block_free_all(&st->blocks); }
/* A check failing inside an OpenMP region cannot longjmp out of it: it records the failure here (the earliest
   iteration's, by the region's induction variables, as a serial run would report) and skips the rest of its
   iteration; the function reports it after the region (loomh_report). */
#define LOOMH_AT 8
typedef struct { loomh_status st; intptr_t at[LOOMH_AT]; } loomh_pending;
static void loomh_defer(loomh_pending *p, int n, const intptr_t *at, int64_t kind, int64_t site, int64_t dim,
                        int64_t a, int64_t b, int64_t c, int64_t size) {
  if (n > LOOMH_AT) n = LOOMH_AT;
#ifdef _OPENMP
#pragma omp critical(loomh_pending)
#endif
  {
    int k = 0;
    while (k < n && at[k] == p->at[k]) k++;
    if (!p->st.failed || (k < n && at[k] < p->at[k])) {
      p->st.failed = kind; p->st.site = site; p->st.dim = dim; p->st.a = a; p->st.b = b; p->st.c = c;
      p->st.size = size;
      for (k = 0; k < n; k++) p->at[k] = at[k];
    }
  }
}
static inline void loomh_report(loomh_ctx *ck, const loomh_pending *p) {
  const loomh_status *s = &p->st;
  if (s->failed) loomh_fail(ck, s->failed, s->site, s->dim, s->a, s->b, s->c, s->size);
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
    if kind == KIND_ALLOC and status.a < 0:
        return f"negative size {status.a} for {op} in @{site.func}"
    if kind == KIND_ALLOC and status.a == 2**63 - 1:
        return f"the number of elements of {op} in @{site.func} does not fit in 64 bits: out of memory"
    if kind == KIND_ALLOC:
        total = status.a * status.b if status.a > 0 else status.b
        return (f"cannot allocate {total} bytes ({max(status.a, 1)} elements of {status.b} bytes) for {op} "
                f"in @{site.func}: out of memory")
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
