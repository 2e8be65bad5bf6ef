"""What a hand-edited ``ubuf`` IR may change, and what follows from the pipeline.

The value simulation takes from the IR the buffers' capacities, the stages' write schedules and kernel
latencies, the read ports' access maps and schedules (``ir_timing``), the kernel bodies, the contents of
tables a kernel looks up (``ir_reader``) and the share slots. Everything else the IR prints follows from the
pipeline and its schedule: the design's size and pixels per cycle; each buffer's element type, extents and
``store_in``; each port's direction, stage, count and domain; the access maps of write ports, of the host's
read of the output and of accumulators; each kernel's inputs, outputs and read ports (their order is the
kernel's argument order, which may change); the tap registers folded into kernels; a share group's stages and
interleaving, and that its kernels stay identical (thesis §5: exact matching). ``check_fixed_fields`` compares
those with the IR the design itself prints and refuses an edit naming the op and the field, so an edit is
either simulated or refused, never ignored. The buffers' ``kind``, ``usage``, ``pattern`` and ``memory`` are
descriptions (the memory mapper decides them again) and are not compared.
"""

from __future__ import annotations

import islpy as isl

from loom.dialects.ubuf import KernelOp, LookupOp
from loom.errors import LoomError

from .ir_reader import IrDesign
from .scheduler import Design
from .sharing import kernel_signature


def _differs(where: str, field: str, got, want, why: str = "it follows from the pipeline; change the pipeline"):
    raise LoomError(f"{field} is {got} but the design's is {want}; {why}", where=where)


def _compare(where: str, field: str, got, want):
    if got != want:
        _differs(where, field, got, want)


def _same_set(text_a: str, text_b: str) -> bool:
    try:
        a = isl.Map(text_a) if "->" in text_a else isl.Set(text_a)
        b = isl.Map(text_b) if "->" in text_b else isl.Set(text_b)
        return a.is_equal(b)
    except isl.Error:
        return False


def _ports(buffer_op) -> dict:
    return {p.port.data: p for p in buffer_op.ports()}


def _check_buffers(design: Design, expected: IrDesign, ir: IrDesign):
    for name, want in expected.buffers.items():
        got = ir.buffers.get(name)
        if got is None:  # a missing buffer is named by ``timed_design``
            continue
        where = f"ubuf.buffer @{name}"
        _compare(where, "the element type", str(got.element_type), str(want.element_type))
        _compare(where, "extents", list(got.extents.get_values()), list(want.extents.get_values()))
        _compare(where, "store_in", got.store_in and got.store_in.data, want.store_in and want.store_in.data)
        have, need = _ports(got), _ports(want)
        if set(have) != set(need):
            _differs(where, "the ports", sorted(have), sorted(need))
        editable = name not in design.accumulators
        for port, w in need.items():
            g = have[port]
            pwhere = f"ubuf.port '{port}' of @{name}"
            for field in ("direction", "stage"):
                _compare(pwhere, field, getattr(g, field).data, getattr(w, field).data)
            _compare(pwhere, "count", g.count.value.data, w.count.value.data)
            if not _same_set(g.domain.data, w.domain.data):
                _differs(pwhere, "the domain", repr(g.domain.data), repr(w.domain.data),
                         "domains follow from the pipeline's bounds (change the pipeline, not the IR)")
            reads = w.direction.data == "out" and w.stage.data in expected.kernels
            if not (editable and reads) and not _same_set(g.access.data, w.access.data):
                _differs(pwhere, "the access map", repr(g.access.data), repr(w.access.data),
                         "only a kernel's read ports may change where they read")


def _lookups(ir: IrDesign) -> set:
    """Tables some kernel looks up (their contents are editable: the simulation reads them)."""
    out = set()
    for k in ir.kernels.values():
        for region in (k.init, k.update):
            for op in region.walk():
                if isinstance(op, LookupOp):
                    out.add(op.table.root_reference.data)
    return out


def _check_kernels(expected: IrDesign, ir: IrDesign):
    extra = sorted(set(ir.kernels) - set(expected.kernels))
    if extra:
        raise LoomError(f"the design has no stage '{extra[0]}'; kernels follow from the pipeline",
                        where=f"ubuf.kernel '{extra[0]}'")
    for stage, want in expected.kernels.items():
        got = ir.kernels.get(stage)
        if got is None:
            raise LoomError(f"the ubuf IR has no ubuf.kernel for stage '{stage}'", where="ubuf.design")
        where = f"ubuf.kernel '{stage}'"
        for field in ("inputs", "outputs"):
            _compare(where, field, [r.root_reference.data for r in getattr(got, field).data],
                     [r.root_reference.data for r in getattr(want, field).data])
        _compare(where, "the read ports", sorted(r.data for r in got.reads.data),
                 sorted(r.data for r in want.reads.data))
        for region in ("init", "update"):  # the value written into the buffer keeps its type
            _compare(f"{where}, {region} region", "the yielded type", _yield_type(getattr(got, region)),
                     _yield_type(getattr(want, region)))


def _yield_type(region) -> str | None:
    return str(region.block.last_op.operands[0].type) if region.blocks and region.block.last_op.operands else None


def _check_constants(expected: IrDesign, ir: IrDesign):
    looked_up = _lookups(ir)
    for name, want in expected.constants.items():
        got = ir.constants.get(name)
        where = f"ubuf.constant @{name}"
        if got is None:
            raise LoomError("the constant is missing from the ubuf IR", where=where)
        for field in ("element_type", "mins", "extents"):
            g, w = getattr(got, field), getattr(want, field)
            _compare(where, field, str(g), str(w))
        if name not in looked_up:
            g = None if got.values is None else list(got.values.get_values())
            w = None if want.values is None else list(want.values.get_values())
            if g != w:
                raise LoomError("the values differ from the design's; these tap registers are folded into the "
                                "kernels' constants: edit those", where=where)
    extra = sorted(set(ir.constants) - set(expected.constants))
    if extra:
        raise LoomError("the design has no such constant", where=f"ubuf.constant @{extra[0]}")


def _check_shares(expected: IrDesign, ir: IrDesign):
    if set(ir.shares) != set(expected.shares):
        _differs("ubuf.design", "the shared kernels", sorted(ir.shares), sorted(expected.shares))
    for name, want in expected.shares.items():
        got, where = ir.shares[name], f"ubuf.share @{name}"
        _compare(where, "the stages", sorted(got.slots()), sorted(want.slots()))
        _compare(where, "the interleaving", got.interleave.data, want.interleave.data)
        first, sig = None, None
        for stage in got.slots():
            k: KernelOp = ir.kernels[stage]
            s = (len(k.reads.data), kernel_signature(k.init))
            if first is None:
                first, sig = stage, s
            elif s != sig:
                raise LoomError(f"the kernel of '{stage}' differs from '{first}''s; the stages of a shared kernel "
                                "run the same hardware (thesis §5: exact matching), so edit them alike",
                                where=where)


def check_fixed_fields(design: Design, expected: IrDesign, ir: IrDesign):
    """Refuse an edit of ``ir`` (against ``expected``, the IR ``design`` prints) to a field that follows from
    the pipeline."""
    where = "ubuf.design"
    _compare(where, "size", list(ir.op.size.get_values()), list(expected.op.size.get_values()))
    _compare(where, "pixels_per_cycle", ir.op.pixels_per_cycle.value.data, expected.op.pixels_per_cycle.value.data)
    _check_buffers(design, expected, ir)
    _check_kernels(expected, ir)
    _check_constants(expected, ir)
    _check_shares(expected, ir)


__all__ = ["check_fixed_fields"]
