"""A run of a kernel's lets as a kernel of its own, so a host can run the lets in steps.

When some lets of a kernel run elsewhere (an accelerator), the lets in between
still compile for the CPU: ``segment(kernel, lets, name)`` is a ``Kernel`` whose
parameters are the original kernel's parameters (so dynamic extents, ``dim(P, a)``,
still resolve), then the intermediate results the run reads but does not compute
(``imports``), then those it computes that a later step reads (``exports``, as
``out&`` parameters). Intermediates used only inside the run stay internal.
"""

from __future__ import annotations

from dataclasses import dataclass

from loom.frontends.ekl import form as F


@dataclass(eq=False)
class Segment:
    kernel: F.Kernel
    params: list[F.Tensor]  # the original kernel's parameters
    imports: list[F.Tensor]  # original tensors read, produced by an earlier step
    exports: list[F.Tensor]  # original tensors produced here and read by a later step

    @property
    def arguments(self) -> list[F.Tensor]:
        """The original tensors to pass, in the segment kernel's parameter order (consts follow)."""
        return [*self.params, *self.imports, *self.exports]


def _retarget(e: F.SExpr, mapping: dict[int, F.Tensor]) -> F.SExpr:
    e = F.map_children(e, lambda c: _retarget(c, mapping))
    if isinstance(e, F.Read) and id(e.tensor) in mapping:
        return F.Read(e.dtype, tensor=mapping[id(e.tensor)], subscripts=e.subscripts, loc=e.loc)
    return e


def segment(kernel: F.Kernel, run: list[F.Let], later: list[F.Let], name: str) -> Segment:
    """The lets ``run`` of ``kernel`` as one kernel; ``later`` are the lets that follow it in other steps."""
    produced = {id(let.target) for let in run}
    read_later = {id(r.tensor) for let in later for r in F.reads(let.body)}
    imports: dict[int, F.Tensor] = {}
    for let in run:
        for r in F.reads(let.body):
            t = r.tensor
            if t.kind == "let" and id(t) not in produced:
                imports.setdefault(id(t), t)
    exports = [let.target for let in run if let.target.kind == "let" and id(let.target) in read_later]
    mapping = {tid: F.Tensor(t.name, t.dtype, t.shape, "param", t.loc) for tid, t in imports.items()}
    mapping.update({id(t): F.Tensor(t.name, t.dtype, t.shape, "param", t.loc, is_output=True) for t in exports})
    lets = [F.Let(mapping.get(id(let.target), let.target), let.bound, let.reductions, let.op,
                  _retarget(let.body, mapping), let.loc) for let in run]
    params = [*kernel.params, *(mapping[id(t)] for t in imports.values()), *(mapping[id(t)] for t in exports)]
    sub = F.Kernel(name, params, kernel.consts, lets, [], kernel.loc)
    return Segment(sub, list(kernel.params), list(imports.values()), exports)
