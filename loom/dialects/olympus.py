"""The ``olympus`` dialect: a system-level dataflow graph for bus-attached FPGAs (D4.5 §4.5, §5.4.2).

=====================  ==============================================================
op / type              meaning
=====================  ==============================================================
``!olympus.channel<iN>``  a channel carrying N-bit elements (only the width matters)
``olympus.channel``    paramType ``stream`` (FIFO of ``depth``), ``small`` (on-chip
                       buffer of ``depth`` elements), ``complex`` (global memory,
                       ``depth`` bytes); optional ``persistent``; layout ``lanes``
                       (elements per bus beat, 1 after sanitize) and ``share`` (the
                       on-chip buffer group after buffer sharing)
``olympus.kernel``     callee, latency, ii (cycles), ff/lut/bram/uram/dsp; operands:
                       input channels then output channels (operandSegmentSizes);
                       optional path, replica, lane
``olympus.pc``         a memory pseudo-channel terminal: ``id`` (the physical memory
                       channel) and one operand, the channel it serves
``olympus.bundle``     several channels packed into one ``width``-bit bus channel
                       (Iris-style); ``layout`` describes one period of beats
=====================  ==============================================================

Printed in generic form, as the seed writes olympus IR.
"""

from __future__ import annotations

from xdsl.dialects.builtin import I64, IntegerAttr, IntegerType, StringAttr, UnitAttr
from xdsl.ir import Attribute, Dialect, ParametrizedAttribute, TypeAttribute
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    param_def,
    prop_def,
    result_def,
    var_operand_def,
)
from xdsl.utils.exceptions import VerifyException

PARAM_TYPES = ("stream", "small", "complex")
RESOURCES = ("ff", "lut", "bram", "uram", "dsp")


@irdl_attr_definition
class ChannelType(ParametrizedAttribute, TypeAttribute):
    name = "olympus.channel"
    element_type: Attribute = param_def()

    def __init__(self, element_type: Attribute):
        super().__init__(element_type)

    @property
    def width(self) -> int:
        return self.element_type.width.data  # type: ignore[attr-defined]

    def verify(self) -> None:
        if not isinstance(self.element_type, IntegerType):
            raise VerifyException(f"!olympus.channel takes a signless integer of the data width, got "
                                  f"{self.element_type}")


def _int(v: int) -> IntegerAttr:
    return IntegerAttr(v, 64)


@irdl_op_definition
class ChannelOp(IRDLOperation):
    name = "olympus.channel"
    paramType = prop_def(StringAttr)
    depth = prop_def(IntegerAttr[I64])
    persistent = opt_prop_def(UnitAttr)
    lanes = opt_prop_def(IntegerAttr[I64])
    share = opt_prop_def(IntegerAttr[I64])
    result = result_def(ChannelType)

    def __init__(self, width: int, param_type: str, depth: int, lanes: int | None = None):
        props = {"paramType": StringAttr(param_type), "depth": _int(depth)}
        if lanes is not None:
            props["lanes"] = _int(lanes)
        super().__init__(properties=props, result_types=[ChannelType(IntegerType(width))])

    @property
    def width(self) -> int:
        return self.result.type.width  # type: ignore[attr-defined]

    @property
    def n_lanes(self) -> int:
        return 1 if self.lanes is None else self.lanes.value.data

    def verify_(self) -> None:
        if self.paramType.data not in PARAM_TYPES:
            raise VerifyException(f"olympus.channel: paramType must be one of {', '.join(PARAM_TYPES)}, got "
                                  f"{self.paramType.data!r}")
        if self.depth.value.data < 1:
            raise VerifyException(f"olympus.channel: depth must be >= 1, got {self.depth.value.data}")
        if self.n_lanes < 1 or self.width % self.n_lanes:
            raise VerifyException(f"olympus.channel: {self.n_lanes} lanes do not divide the width {self.width}")


@irdl_op_definition
class KernelOp(IRDLOperation):
    name = "olympus.kernel"
    callee = prop_def(StringAttr)
    latency = prop_def(IntegerAttr[I64])
    ii = prop_def(IntegerAttr[I64])
    ff = prop_def(IntegerAttr[I64])
    lut = prop_def(IntegerAttr[I64])
    bram = prop_def(IntegerAttr[I64])
    uram = prop_def(IntegerAttr[I64])
    dsp = prop_def(IntegerAttr[I64])
    path = opt_prop_def(StringAttr)
    replica = opt_prop_def(IntegerAttr[I64])
    lane = opt_prop_def(IntegerAttr[I64])
    inputs = var_operand_def(ChannelType)
    outputs = var_operand_def(ChannelType)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    def resources(self) -> dict[str, int]:
        return {r: getattr(self, r).value.data for r in RESOURCES}

    def verify_(self) -> None:
        if self.ii.value.data < 1 or self.latency.value.data < 0:
            raise VerifyException(f"olympus.kernel {self.callee.data!r}: ii must be >= 1 and latency >= 0")
        for r, v in self.resources().items():
            if v < 0:
                raise VerifyException(f"olympus.kernel {self.callee.data!r}: {r} must be >= 0, got {v}")


@irdl_op_definition
class PcOp(IRDLOperation):
    name = "olympus.pc"
    id = prop_def(IntegerAttr[I64])
    channel = operand_def(ChannelType)

    def __init__(self, channel, pc_id: int = 0):
        super().__init__(operands=[channel], properties={"id": _int(pc_id)})


@irdl_op_definition
class BundleOp(IRDLOperation):
    name = "olympus.bundle"
    layout = prop_def(StringAttr)
    channels = var_operand_def(ChannelType)
    result = result_def(ChannelType)

    def __init__(self, channels, width: int, layout: str):
        super().__init__(operands=[list(channels)], properties={"layout": StringAttr(layout)},
                         result_types=[ChannelType(IntegerType(width))])


Olympus = Dialect("olympus", [ChannelOp, KernelOp, PcOp, BundleOp], [ChannelType])

__all__ = ["Olympus", "ChannelType", "ChannelOp", "KernelOp", "PcOp", "BundleOp", "PARAM_TYPES", "RESOURCES"]
