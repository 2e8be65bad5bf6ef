"""A scheduled streaming design (``loom.streaming.Design``) as ``ubuf`` dialect IR.

``design_to_ir(design)`` gives a verified module holding one ``ubuf.design``: its
buffers with their ports (iteration domain, access map, cycle schedule as isl
text), accumulators, constant ROMs (with their contents) and compute kernels with
their offsets and their bodies (``loom.streaming.kernel_ir``: what one firing
computes from the values its read ports deliver). ``simulate`` evaluates exactly
this IR, so printed IR can be edited and simulated again.
"""

from __future__ import annotations

from xdsl.dialects.builtin import BFloat16Type, IntegerType, ModuleOp, Signedness, f32, i1
from xdsl.ir import Operation, TypeAttribute

from loom.dialects.ubuf import BufferOp, ConstantOp, DesignOp, KernelOp, PortOp, ShareOp
from loom.streaming.extract import accumulator_name
from loom.streaming.kernel_ir import constant_contents, kernel_regions


_ELEMENT = {"u8": (8, Signedness.UNSIGNED), "u16": (16, Signedness.UNSIGNED), "u32": (32, Signedness.UNSIGNED),
            "i8": (8, Signedness.SIGNED), "i16": (16, Signedness.SIGNED), "i32": (32, Signedness.SIGNED)}


def element_type(t) -> TypeAttribute:
    """The MLIR type of a pipeline type, signedness kept (u16 -> ui16, i16 -> si16)."""
    if t.name in _ELEMENT:
        return IntegerType(*_ELEMENT[t.name])
    return {"f32": f32, "bf16": BFloat16Type(), "bool": i1}[t.name]


def _port_op(buffer: str, p) -> PortOp:
    names = p.loop_names()
    space = p.isl_space_name()
    loops = ", ".join(names)
    domain = f"{{ {space}[{loops}] : {p.domain_text()} }}"
    access = f"{{ {space}[{loops}] -> {buffer}[{', '.join(p.index_texts())}] }}"
    schedule = f"{{ {space}[{loops}] -> [{p.schedule_text()}] }}"
    return PortOp(p.direction, p.name, p.stage, domain, access, schedule, p.count)


def read_port_names(node) -> list[str]:
    """``buffer/port`` of each of the stage's reads, as the scheduler names the ports (``conv1#3``)."""
    out, seen = [], {}
    for r in node.reads:
        k = seen.get(r.producer, 0)
        seen[r.producer] = k + 1
        out.append(f"{r.producer}/{node.name}#{k}")
    return out


def shared_kernel_name(root: str) -> str:
    """The ``ubuf.share`` symbol of the hardware kernel a share group rooted at ``root`` time-multiplexes."""
    return f"{root}_shared"


def design_to_ir(design, name: str | None = None) -> ModuleOp:
    """``design`` (``loom.streaming.Design``) as a verified module holding one ``ubuf.design``."""
    classes = design.memory_classes()
    ops: list[Operation] = []
    for bname, b in design.buffers.items():
        source = design.stages[bname].node.source
        mc = classes.get(bname)
        ops.append(BufferOp(bname, element_type(source.type), b.extents, b.capacity, b.kind,
                            mc.usage if mc else "streaming", mc.index_pattern if mc else "affine",
                            mc.kind if mc else b.kind, [_port_op(bname, p) for p in b.ports],
                            store_in=b.memory_type))
    for sname in design.stages:  # reductions iterated in time: the read-modify-write accumulators
        aname = accumulator_name(sname)
        a = design.accumulators.get(aname)
        if a is None:
            continue
        mc = classes.get(aname)
        ops.append(BufferOp(aname, element_type(design.stages[sname].node.source.type), a.extents, a.capacity,
                            a.kind, mc.usage if mc else "read-modify-write", mc.index_pattern if mc else "affine",
                            mc.kind if mc else a.kind, [_port_op(aname, p) for p in a.ports]))
    tables = constant_contents(design.acc, design.regions)
    for cname, (kind, entries, depth) in design.roms.items():
        c = design.acc.constants[cname]
        contents = tables.get(cname)
        mins, extents, values = None, None, None
        if contents is not None:
            mins, array = contents
            extents = array.shape[::-1]
            flat = array.ravel()
            values = (flat.view(f"u{flat.dtype.itemsize}") if flat.dtype.kind == "f" else flat).astype("i8")
        ops.append(ConstantOp(cname, element_type(c.func.type), kind, c.index_pattern, entries, depth,
                              mins, extents, values))
    for sname, plan in design.stages.items():
        if plan.node.kind == "stream":
            continue
        inputs = list(dict.fromkeys(r.producer for r in plan.node.reads))
        init, update = kernel_regions(design.acc, plan.node, tables)
        ops.append(KernelOp(sname, inputs, [sname], plan.offset, plan.latency, reads=read_port_names(plan.node),
                            init=init, update=update))
    shared = getattr(design, "sharing", None)
    if shared is not None:  # compute sharing: the stages multiplexed on one kernel and their time slots
        runs = [(n, run) for n in shared.stages for run in shared.slots[n]]  # a stage may have several slots
        ops.append(ShareOp(shared_kernel_name(shared.name), [n for n, _ in runs], shared.interleave, shared.period,
                           [a for _, (a, _) in runs], [k for _, (_, k) in runs]))
    top = DesignOp(name or design.acc.func.name, design.latency, design.acc.lanes, design.size, ops)
    module = ModuleOp([top])
    module.verify()
    return module


__all__ = ["design_to_ir", "element_type", "read_port_names", "shared_kernel_name"]
