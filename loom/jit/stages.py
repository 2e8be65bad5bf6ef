"""A kernel's IR at each stage of the CPU path, as text (``loom ir``, ``loom build``)."""

from __future__ import annotations

import io

from xdsl.dialects.builtin import ModuleOp

STAGES = ("frontend", "loops", "lowered", "c")
STAGE_HELP = {"frontend": "as traced from the source", "loops": "linalg lowered to loops",
              "lowered": "what the C backend takes", "c": "the generated C source"}


def stage_text(module: ModuleOp, stage: str, locations: bool = False) -> str:
    """``module`` at ``stage`` (one of STAGES); ``locations`` prints the frontend's loc(...)."""
    from loom.passes.recipes import lower_to_c, lower_to_loops

    if stage == "frontend":
        if not locations:
            return str(module)
        from xdsl.printer import Printer

        stream = io.StringIO()
        Printer(stream=stream, print_debuginfo=True).print_op(module)
        return stream.getvalue()
    if stage == "loops":
        return str(lower_to_loops(module))
    lowered = lower_to_c(module)
    if stage == "lowered":
        return str(lowered)
    from loom.backends.c import emit_c

    return emit_c(lowered)
