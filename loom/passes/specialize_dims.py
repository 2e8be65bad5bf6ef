"""``loom-specialize-dims{dims="M=16,N=8"}``: give named dynamic dimensions fixed sizes.

Matches: every ``func.func`` with a body whose memref arguments name their dynamic axes with
``loom.dims`` (see ``loom.dialects.dims``).
Produces: the same function with each named ``?`` axis replaced by its size in ``dims``: the
argument types, the block arguments and the function type change, and every ``memref.dim`` of a
now static axis becomes an ``arith.constant``. The ``loom.dims`` names stay (the sizes still have
to agree). Hardware flows (the HLS backend) need static shapes: array ports and on-chip buffers
are sized at compile time.
Leaves alone: axes that are static already or have no name, names not in ``dims``, functions
without a body, memref arguments with a layout other than the identity.
A function called from within the module is specialized by its own names as well, so a caller and a callee
naming their axes alike stay in step (``scale_rows`` calling ``scale_row``); a call whose operands' types then
differ from its callee's arguments (a caller whose axes have no names, or other names) is a ``LoomError`` naming
both, as are a size that contradicts a static axis with the same name and a bad ``dims`` text.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, func, memref
from xdsl.dialects.builtin import DYNAMIC_INDEX, FunctionType, IndexType, IntegerAttr, MemRefType, ModuleOp, NoneAttr
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from loom.dialects.dims import arg_dim_names, parse_dims
from loom.errors import LoomError
from loom.passes.loop_nests import constant_int

@dataclass(frozen=True)
class SpecializeDimsPass(ModulePass):
    name = "loom-specialize-dims"

    dims: str = ""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        sizes = parse_dims(self.dims, where="dims")
        funcs = {fn.sym_name.data: fn for fn in op.walk() if isinstance(fn, func.FuncOp)}
        for fn in funcs.values():
            if fn.body.blocks:
                _specialize(fn, sizes)
        for call in op.walk():
            if isinstance(call, func.CallOp):
                _check_call(call, funcs)


def _check_call(call: func.CallOp, funcs: dict) -> None:
    """A call's operands must still have its callee's argument types once both are specialized."""
    name = call.callee.root_reference.data
    callee = funcs.get(name)
    if callee is None:
        return
    caller = call.parent_op()
    while caller is not None and not isinstance(caller, func.FuncOp):
        caller = caller.parent_op()
    for k, (arg, want) in enumerate(zip(call.arguments, callee.function_type.inputs.data)):
        if arg.type != want:
            raise LoomError(f"loom-specialize-dims: @{caller.sym_name.data if caller else '?'} passes {arg.type} as "
                            f"argument {k} of @{name}, which now takes {want}; name the caller's axes as the callee's "
                            "(loom.dims) so both get the same sizes", where="dims")


def _specialize(fn: func.FuncOp, sizes: dict[str, int]) -> None:
    names = arg_dim_names(fn)
    block = fn.body.blocks[0]
    inputs = list(fn.function_type.inputs.data)
    changed = False
    for k, (ty, axes) in enumerate(zip(inputs, names)):
        if axes is None or not isinstance(ty, MemRefType) or not isinstance(ty.layout, NoneAttr):
            continue
        shape = list(ty.get_shape())
        new = list(shape)
        for axis, name in enumerate(axes):
            if name is None or name not in sizes or axis >= len(shape):
                continue
            if shape[axis] == DYNAMIC_INDEX:
                new[axis] = sizes[name]
            elif shape[axis] != sizes[name]:
                raise LoomError(f"loom-specialize-dims: {name}={sizes[name]} but axis {axis} of argument {k} of "
                                f"@{fn.sym_name.data} is {shape[axis]}", where="dims")
        if new == shape:
            continue
        new_type = MemRefType(ty.element_type, new, ty.layout, ty.memory_space)
        inputs[k] = new_type
        Rewriter.replace_value_with_new_type(block.args[k], new_type)
        changed = True
    if not changed:
        return
    fn.function_type = FunctionType.from_lists(inputs, list(fn.function_type.outputs.data))
    for dim in list(fn.walk()):
        if isinstance(dim, memref.DimOp):
            shape = dim.source.type.get_shape()  # type: ignore[attr-defined]
            axis = constant_int(dim.index)
            if axis is not None and 0 <= axis < len(shape) and shape[axis] != DYNAMIC_INDEX:
                const = arith.ConstantOp(IntegerAttr(shape[axis], IndexType()))
                Rewriter.replace_op(dim, const)
