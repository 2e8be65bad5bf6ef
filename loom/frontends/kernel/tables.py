"""numpy arrays a kernel reads from its globals or closure: constant tables (``memref.global`` constants).

A lookup table, filter taps or a gamma curve kept as a module-level numpy array is read inside the kernel as a
read-only memref of the array's dtype and shape (``LUT[X[i]]``). The values are captured when the kernel is first
traced, like every Python constant a kernel reads: changing the array afterwards does not change the kernel.
Writing to a table, or passing it to a kernel call or an intrinsic (which may write), is refused: the C backend
places it in read-only memory.
"""

from __future__ import annotations

import hashlib

import numpy as np
from xdsl.builder import Builder, ImplicitBuilder
from xdsl.dialects import memref
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, MemRefType, StringAttr, TensorType, UnitAttr
from xdsl.ir import Block
from xdsl.rewriter import InsertPoint

from loom.errors import LoomError
from loom.frontends.kernel.kernel_types import scalar_of_numpy
from loom.frontends.kernel.values import MemRefValue

MAX_ELEMENTS = 1 << 20  # embedded as C initialisers: larger data belongs in an argument


def table_symbol(array: np.ndarray) -> str:
    """A name determined by the contents, so equal tables of a kernel and its callees are one global."""
    digest = hashlib.sha1(f"{array.dtype.str}{array.shape}".encode() + array.tobytes()).hexdigest()[:16]
    return f"loom_table_{digest}"


def global_op(array: np.ndarray, name: str) -> memref.GlobalOp:
    stype = scalar_of_numpy(array.dtype.type(0))
    if stype is None:
        raise LoomError(f"a numpy array of dtype {array.dtype} cannot be a kernel table (use float32/64, "
                        "int8/16/32/64 or bool)")
    if array.size > MAX_ELEMENTS:
        raise LoomError(f"a numpy array of {array.size} elements is too large to embed in a kernel "
                        f"(at most {MAX_ELEMENTS}); pass it as an argument")
    values = [bool(v) if stype.kind == "bool" else v.item() for v in array.reshape(-1)]
    shape = list(array.shape)
    init = DenseIntOrFPElementsAttr.from_list(TensorType(stype.xdsl, shape), values)
    return memref.GlobalOp.get(StringAttr(name), MemRefType(stype.xdsl, shape), init, constant=UnitAttr())


class TableMixin:
    """Mixed into ``Tracer``: ``constant_table`` turns a captured array into a read-only memref."""

    def constant_table(self, array: np.ndarray, pyname: str) -> MemRefValue:
        array = np.ascontiguousarray(array)
        name = table_symbol(array)
        hit = self._table_refs.get(name)
        if hit is not None:
            return hit
        scratch = Block()  # ops are created into the current block (xDSL's implicit builder): not this one
        with ImplicitBuilder(scratch):
            op = global_op(array, name)
        op.detach()
        self.tables[name] = op
        with ImplicitBuilder(Builder(InsertPoint.at_start(self.ctx.entry_block))):
            ref = memref.GetGlobalOp(name, op.type)
        ref.location = self.ctx.loc
        view = MemRefValue(ref.results[0], element=scalar_of_numpy(array.dtype.type(0)))
        view.read_only = pyname
        self._table_refs[name] = view
        return view

    def check_writable(self, view, what: str, node) -> None:
        if isinstance(view, MemRefValue) and view.read_only:
            raise self.err(f"'{view.read_only}' is a constant table (a numpy array the kernel captured): it cannot "
                           f"be {what}; copy it into loom.alloc(...) first", node, "table")
