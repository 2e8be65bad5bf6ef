"""A scheduled streaming design (``loom.streaming.Design``) as ``ubuf`` dialect IR.

``design_to_ir(design)`` gives a verified module holding one ``ubuf.design``: its
buffers with their ports (iteration domain, access map, cycle schedule as isl
text), accumulators, constant ROMs and compute kernels with their offsets.
"""

from __future__ import annotations

from xdsl.dialects.builtin import BFloat16Type, IntegerType, ModuleOp, Signedness, f32, i1
from xdsl.ir import Operation, TypeAttribute

from loom.dialects.ubuf import BufferOp, ConstantOp, DesignOp, KernelOp, PortOp
from loom.streaming.extract import accumulator_name


_ELEMENT = {"u8": (8, Signedness.UNSIGNED), "u16": (16, Signedness.UNSIGNED), "u32": (32, Signedness.UNSIGNED),
            "i16": (16, Signedness.SIGNED), "i32": (32, Signedness.SIGNED)}


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
    for cname, (kind, entries, depth) in design.roms.items():
        c = design.acc.constants[cname]
        ops.append(ConstantOp(cname, element_type(c.func.type), kind, c.index_pattern, entries, depth))
    for sname, plan in design.stages.items():
        if plan.node.kind == "stream":
            continue
        inputs = list(dict.fromkeys(r.producer for r in plan.node.reads))
        ops.append(KernelOp(sname, inputs, [sname], plan.offset))
    top = DesignOp(name or design.acc.func.name, design.latency, design.acc.lanes, design.size, ops)
    module = ModuleOp([top])
    module.verify()
    return module


__all__ = ["design_to_ir", "element_type"]
