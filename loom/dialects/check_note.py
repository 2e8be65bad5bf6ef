"""``loom.check``: what an op computes for the user, named in the message of its run-time check.

A frontend lowering a construct to ops the user never wrote (a ``range()`` with a run-time step becomes an
``arith.ceildivsi`` of its length by the step) sets the attribute on the op that a check guards, so a failure
reads ``range() step is zero (integer division by zero in arith.ceildivsi)`` rather than only the op's name.
Discardable (dialect prefix ``loom.``), as ``loom.dims``: upstream tools keep it.
"""

from __future__ import annotations

from xdsl.dialects.builtin import StringAttr
from xdsl.ir import Operation

CHECK_ATTR = "loom.check"


def set_check_note(op: Operation, what: str) -> None:
    op.attributes[CHECK_ATTR] = StringAttr(what)


def check_note(op: Operation) -> str | None:
    note = op.attributes.get(CHECK_ATTR)
    return note.data if isinstance(note, StringAttr) else None
