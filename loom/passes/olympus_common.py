"""Helpers shared by the olympus passes: the platform option and cloning kernels with channels."""

from __future__ import annotations

from xdsl.dialects.builtin import IntegerAttr, ModuleOp
from xdsl.ir import Operation

from loom.dialects.olympus import ChannelOp, KernelOp, PcOp
from loom.errors import LoomError
from loom.platform import Platform, load_platform


def platform_of(path: str, pass_name: str) -> Platform:
    if not path:
        raise LoomError(f"{pass_name} needs a platform description: {pass_name}{{platform=P.json}}",
                        where=pass_name)
    return load_platform(path)


def system_ops(module: ModuleOp) -> list[Operation]:
    return [op for op in module.body.block.ops if isinstance(op, (ChannelOp, KernelOp, PcOp))]


def clone_system(ops: list[Operation], replica: int) -> list[Operation]:
    """A copy of channels, kernels and PCs; the copy's kernels get ``replica``, PCs keep their ids."""
    mapping: dict = {}
    copies = []
    for op in ops:
        c = op.clone(value_mapper=mapping)
        for old, new in zip(op.results, c.results):
            mapping[old] = new
        if isinstance(c, KernelOp):
            c.replica = IntegerAttr(replica, 64)
        copies.append(c)
    return copies
