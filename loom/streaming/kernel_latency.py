"""Kernel latency in cycles: the critical path through a ``ubuf.kernel`` region under an op latency table.

Each op finishes ``table[op name]`` cycles (default 0 for names not listed) after the latest of its
operands; block arguments (the values the read ports deliver) are ready at cycle 0. The kernel's
latency is when the value it yields is ready: with every operator registered (``PIPELINED``), a
fully pipelined kernel takes one value per cycle and delivers it that many cycles later.
"""

from __future__ import annotations

from xdsl.ir import Block

# one pipeline register per arithmetic operator; constants, width changes and bit casts are wires
PIPELINED = {name: 1 for name in (
    "arith.addi", "arith.subi", "arith.muli", "arith.andi", "arith.ori", "arith.xori", "arith.divui",
    "arith.remui", "arith.floordivsi", "arith.ceildivsi", "arith.remsi", "arith.shli", "arith.shrui",
    "arith.shrsi",
    "arith.minui", "arith.maxui", "arith.minsi", "arith.maxsi", "arith.cmpi", "arith.cmpf", "arith.select",
    "arith.addf", "arith.subf", "arith.mulf", "arith.divf", "arith.minimumf", "arith.maximumf",
    "arith.sitofp", "arith.uitofp", "arith.fptosi", "math.floor", "math.trunc", "math.absf", "math.absi", "ubuf.lookup",
    "arith.negf", "math.fma")}


def critical_path(block: Block, table: dict) -> int:
    """Cycles from the block's arguments to the value its terminator yields."""
    ready = {a: 0 for a in block.args}
    for op in block.ops:
        start = max((ready.get(v, 0) for v in op.operands), default=0)
        if op.name == "ubuf.yield":
            return start
        done = start + int(table.get(op.name, 0))
        for r in op.results:
            ready[r] = done
    return 0


__all__ = ["PIPELINED", "critical_path"]
