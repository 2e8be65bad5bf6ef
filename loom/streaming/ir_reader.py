"""Read a ``ubuf`` module back into what the value simulation needs: kernels, port accesses, tables.

``IrDesign(module)`` takes the one ``ubuf.design`` of a module (built by
``design_to_ir`` or parsed from edited text) and gives, per compute stage, its
``ubuf.kernel``; per shared hardware kernel, its ``ubuf.share`` (stages, period, slots);
per read port (``buffer/port``), its access map as
``(rows, offsets, divisors)`` with ``index_j = floor((rows_j . p + offsets_j) / divisors_j)``,
read from the isl text with isl itself (a map isl cannot put in that form is a
``LoomError`` naming the port); per ``ubuf.constant`` with contents, its table.
"""

from __future__ import annotations

import math
from fractions import Fraction

import islpy as isl
import numpy as np
from xdsl.dialects.builtin import ModuleOp

from loom.dialects.ubuf import BufferOp, ConstantOp, DesignOp, KernelOp, ShareOp
from loom.errors import LoomError

from .kernel_eval import storage_dtype


def _frac(v: isl.Val) -> Fraction:
    den = v.get_den_val()
    return Fraction(v.mul(den).to_python(), den.to_python())  # exact: get_num_si wraps beyond int64


def parse_access(text: str, where: str, buffer: str | None = None, domain: str | None = None) -> tuple:
    """``{ S[x, y] -> b[floor((1 + x)/2), y] }`` -> (rows, offsets, divisors). With ``buffer`` and ``domain``
    (the port's), the map must name that buffer and give an index at every point of the domain."""
    try:
        m = isl.Map(text)
    except isl.Error as e:
        raise LoomError(f"access map {text!r} is not valid isl ({e})", where=where) from None
    if m.dim(isl.dim_type.param):
        raise LoomError(f"access map {text!r} has parameters; a port reads at constant offsets", where=where)
    if buffer is not None and m.get_tuple_name(isl.dim_type.out) != buffer:
        raise LoomError(f"access map {text!r} reads '{m.get_tuple_name(isl.dim_type.out)}', not its buffer "
                        f"'{buffer}'", where=where)
    if domain is not None:
        try:
            total = isl.Set(domain).is_subset(m.domain())
        except isl.Error:
            total = False
        if not total:
            raise LoomError(f"access map {text!r} gives no index at some points of the port's domain {domain!r} "
                            "(an x/2 of isl is rational: write floor(x/2))", where=where)
    if not m.is_single_valued():
        raise LoomError(f"access map {text!r} gives several indices for one point", where=where)
    pma = m.as_pw_multi_aff()
    n_in = m.dim(isl.dim_type.in_)
    rows, offs, divs = [], [], []
    for j in range(pma.dim(isl.dim_type.out)):
        pieces = pma.get_pw_aff(j).get_pieces()
        if len(pieces) != 1:
            raise LoomError(f"index {j} of access map {text!r} is piecewise; a port reads floor((a.p + c)/d)",
                            where=where)
        (_, aff), = pieces
        coef = [_frac(aff.get_coefficient_val(isl.dim_type.in_, k)) for k in range(n_in)]
        const = _frac(aff.get_constant_val())
        n_div = aff.dim(isl.dim_type.div)
        if n_div == 0 and all(c.denominator == 1 for c in coef + [const]):
            rows.append(tuple(int(c) for c in coef))
            offs.append(int(const))
            divs.append(1)
            continue
        used = [(i, _frac(aff.get_coefficient_val(isl.dim_type.div, i))) for i in range(n_div)]
        used = [(i, c) for i, c in used if c != 0]
        # isl writes floor((2y)/3) as y + floor((-y)/3): an integer k outside, k + floor(u/d) = floor((u + d k)/d)
        if len(used) == 1 and used[0][1] == 1 and all(c.denominator == 1 for c in coef + [const]):
            inner = aff.get_div(used[0][0])
            icoef = [_frac(inner.get_coefficient_val(isl.dim_type.in_, k)) for k in range(n_in)]
            iconst = _frac(inner.get_constant_val())
            if all(_frac(inner.get_coefficient_val(isl.dim_type.div, i)) == 0
                   for i in range(inner.dim(isl.dim_type.div))):
                d = math.lcm(*(c.denominator for c in icoef + [iconst]))
                rows.append(tuple(int((c + o) * d) for c, o in zip(icoef, coef)))
                offs.append(int((iconst + const) * d))
                divs.append(d)
                continue
        raise LoomError(f"index {j} of access map {text!r} is not of the form floor((a.p + c)/d)", where=where)
    if any(abs(v) >= 1 << 31 for v in [*offs, *divs, *(a for r in rows for a in r)]):
        raise LoomError(f"access map {text!r} has a coefficient of 2**31 or more", where=where)
    return tuple(rows), tuple(offs), tuple(divs)


class IrDesign:
    """The kernels, read-port accesses and constant tables of a ``ubuf`` module."""

    def __init__(self, module: ModuleOp):
        designs = [op for op in module.ops if isinstance(op, DesignOp)]
        if len(designs) != 1:
            raise LoomError(f"expected one ubuf.design in the module, found {len(designs)}", where="ubuf module")
        self.op = designs[0]
        self.kernels: dict[str, KernelOp] = {}
        self.accesses: dict[tuple[str, str], tuple] = {}
        self.tables: dict[str, tuple] = {}
        self.shares: dict[str, ShareOp] = {}  # hardware kernels time-multiplexed by several stages
        self.buffers: dict[str, BufferOp] = {}
        self.constants: dict[str, ConstantOp] = {}
        for op in self.op.body.ops:
            if isinstance(op, ShareOp):
                self.shares[op.sym_name.data] = op
            elif isinstance(op, KernelOp):
                self.kernels[op.stage.data] = op
            elif isinstance(op, BufferOp):
                self.buffers[op.sym_name.data] = op
                for p in op.ports():
                    if p.direction.data == "out":
                        where = f"ubuf.port '{p.port.data}' of @{op.sym_name.data}"
                        self.accesses[(op.sym_name.data, p.port.data)] = parse_access(
                            p.access.data, where, op.sym_name.data, p.domain.data)
            if isinstance(op, ConstantOp):
                self.constants[op.sym_name.data] = op
            if isinstance(op, ConstantOp) and op.values is not None:
                extents = tuple(op.extents.get_values())
                raw = np.array(op.values.get_values(), dtype=np.int64)
                dt = storage_dtype(op.element_type, f"ubuf.constant @{op.sym_name.data}")
                if np.dtype(dt).kind == "f":
                    array = raw.astype(np.uint32 if np.dtype(dt).itemsize == 4 else np.uint64).view(dt)
                else:
                    array = raw.astype(dt)
                self.tables[op.sym_name.data] = (tuple(op.mins.get_values()), array.reshape(extents[::-1]))

    def kernel(self, stage: str) -> KernelOp:
        k = self.kernels.get(stage)
        if k is None:
            raise LoomError(f"the ubuf IR has no ubuf.kernel for stage '{stage}'",
                            where=f"ubuf.design @{self.op.sym_name.data}")
        return k

    def access(self, buffer: str, port: str) -> tuple:
        a = self.accesses.get((buffer, port))
        if a is None:
            raise LoomError(f"the ubuf IR has no read port '{port}' on @{buffer}", where=f"ubuf.buffer @{buffer}")
        return a


__all__ = ["IrDesign", "parse_access"]
