"""``accel-coalesce`` on a function with two DMA sessions (two ops on two accelerators), textual ``.mlir`` in
-> IR out: each ``init_dma`` .. ``free_dma`` session coalesces its own sends into its own pending-length
cell. (Before, each init walked the whole function: the second session's opcodes were rewritten twice,
once against the first session's cell, which the C backend then could not find.)"""

from __future__ import annotations

from pathlib import Path

from xdsl.dialects import memref
from xdsl.parser import Parser

from loom.dialects import accel, context
from loom.passes import Pipeline

HERE = Path(__file__).parent


def sessions(module):
    """The top-level ops of the function, split at each init_dma (one list per session, init first)."""
    fn = next(o for o in module.walk() if o.name == "func.func")
    out: list[list] = []
    for op in fn.body.blocks[0].ops:
        if isinstance(op, accel.InitDmaOp):
            out.append([])
        if out:
            out[-1].append(op)
    return out


def test_each_session_coalesces_into_its_own_cell():
    module = Parser(context(), (HERE / "two_sessions_placed.mlir").read_text()).parse_module()
    flushes = [o for o in module.walk() if isinstance(o, accel.FlushSendOp)]
    assert len(flushes) == 4  # two opcodes per session (Cs: sABcC, sendC)
    Pipeline.parse("accel-coalesce").run(module)
    parts = sessions(module)
    assert len(parts) == 2
    for part in parts:
        cells = [o for top in part for o in top.walk() if isinstance(o, memref.AllocaOp)]
        assert len(cells) == 1  # the session's pending length
        cell = cells[0].memref
        used = {o.memref for top in part for o in top.walk() if isinstance(o, (memref.LoadOp, memref.StoreOp))}
        assert used == {cell}, "a session reads or writes another session's cell"
        # the session's sends go out through start_send/wait_send, flushed before each receive and free_dma
        ops = [o for top in part for o in top.walk()]
        assert not any(isinstance(o, accel.FlushSendOp) for o in ops)
        assert sum(isinstance(o, accel.StartSendOp) for o in ops) >= 2
