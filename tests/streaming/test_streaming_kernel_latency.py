"""Kernels with a latency in cycles (pipelined operators): the critical path of each ``ubuf.kernel`` under an
op latency table delays the stage's writes; schedules, simulation and capacities follow.

Hand counts (``PIPELINED``: one cycle per arithmetic operator, constants and width changes are wires) for
cascade: conv1 = 0 + w0*p0 + ... + w8*p8 is a multiply (1) then a chain of nine adds: 10 cycles; the output
stage reads conv1 / 16 (a division by a constant needs no zero guard: divide 1), multiplies (2), chains nine
adds (11) and divides by 16 again (12): 12 cycles.
"""

import numpy as np
import pytest
from tests.pipelines_cpu.cpu_apps import example, numpy_reference, random_inputs

from loom.dialects.ubuf import KernelOp
from loom.errors import LoomError
from loom.streaming import build_design, simulate
from loom.streaming.kernel_latency import PIPELINED, critical_path
from loom.streaming.to_ubuf import design_to_ir

SIZE = (16, 12)


def _cascade(**kw):
    out, _ = example("cascade").build("accel", tile=SIZE)
    return out, build_design(out, SIZE, **kw)


def test_cascade_kernel_latencies_by_hand_and_in_the_ir():
    out, d = _cascade(op_latency=PIPELINED)
    assert {n: p.latency for n, p in d.stages.items()} == {"input": 0, "hw_input": 0, "conv1": 10, "output": 12}
    kernels = {op.stage.data: op for op in design_to_ir(d).ops.first.body.ops if isinstance(op, KernelOp)}
    assert {n: k.latency.value.data for n, k in kernels.items()} == {"hw_input": 0, "conv1": 10, "output": 12}
    assert critical_path(kernels["conv1"].init.block, {}) == 0  # no latency table: combinational


def test_latency_delays_each_stage_by_its_kernel():
    out, d0 = _cascade()
    _, d1 = _cascade(op_latency=PIPELINED)
    row = SIZE[0] + 4
    assert d0.offsets == {"input": 0, "hw_input": 0, "conv1": 2 * row + 2, "output": 2 * (2 * row + 2)}
    assert d1.offsets == {"input": 0, "hw_input": 0, "conv1": 2 * row + 2 + 10, "output": 2 * (2 * row + 2) + 22}
    assert d1.latency == d0.latency + 22
    # the kernels' pipeline registers hold the values in flight: the buffers do not grow
    assert d1.capacities == d0.capacities
    # a stage still reads on the same cycles relative to its producer: the reads move with the kernel start
    assert d1.stages["conv1"].iteration().schedule.offset == d0.stages["conv1"].schedule.offset


@pytest.mark.parametrize("name", ["cascade", "harris", "unsharp"])
def test_pipelined_designs_simulate_bit_exact_with_tight_buffers(name):
    mod = example(name)
    out, _ = mod.build("accel", tile=SIZE)
    size = tuple(mod.output_shape(SIZE))
    d = build_design(out, size, op_latency=PIPELINED)
    assert all(p.latency > 0 for p in d.stages.values() if p.node.kind == "compute" and p.name != "hw_input")
    inputs = random_inputs(name, mod, SIZE, salt="latency")
    np.testing.assert_array_equal(simulate(out, inputs, size, design=d), numpy_reference(name, mod, inputs, SIZE))
    for buf, cap in list(d.capacities.items())[:4]:
        if cap:
            with pytest.raises(LoomError, match="read after eviction"):
                simulate(out, inputs, size, design=d, capacities={buf: cap - 1})


def test_a_pipelined_kernel_cannot_iterate_a_reduction_in_time():
    mod = example("gemm")
    out, _ = mod.build("accel", tile=(8, 8), k_unroll=2)
    with pytest.raises(LoomError, match="Func 'prod'.*cannot iterate a reduction in time"):
        build_design(out, (8, 8), op_latency=PIPELINED)


def test_amber_latency_is_the_slowest_copy_with_its_channel_constant():
    """A channel unrolled into 3 copies, each multiplying by select(c == 0, 3, select(c == 1, 5, 7)): in each
    copy c is a constant, the selects fold (as the PE count folds them) and the kernel is one multiply: the
    design takes 256 + 1 cycles under AMBER (it counted the compare and both selects: 260)."""
    import loom.frontends.pipeline as lp
    from loom.frontends.pipeline.recipes import stream_through_accelerator
    from loom.streaming.kernel_netlist import AMBER

    x, y, c = lp.Var("x"), lp.Var("y"), lp.Var("c")
    inp = lp.ImageParam(lp.UInt8, 3, "input")
    hw, out = lp.Func("hw_input"), lp.Func("output")
    hw[x, y, c] = lp.u16(inp[x, y, c])
    out[x, y, c] = hw[x, y, c] * lp.select(c == 0, lp.u16(3), lp.select(c == 1, lp.u16(5), lp.u16(7)))
    out.bound(c, 0, 3)
    stream_through_accelerator(out, (16, 16), buffered=[hw])
    d = build_design(out, (16, 16, 3), op_latency=AMBER)
    assert d.latency == 16 * 16 + 1
    img = np.random.default_rng(2).integers(0, 256, (3, 16, 16), np.uint8)
    want = img.astype(np.uint16) * np.array([3, 5, 7], np.uint16)[:, None, None]
    np.testing.assert_array_equal(simulate(out, {"input": img}, (16, 16, 3), design=d), want)
