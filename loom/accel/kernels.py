"""Kernels an accelerator implements: indexing maps, iterator types, body kind.

A kernel is what ``linalg.generic`` carries: one indexing map per operand (loop
dims -> operand subscripts), one iterator type per loop dim, and the kind of
scalar body. Named linalg ops are expanded from ``NAMED_KERNELS``. Map results
are linear forms over the dims (``oh + fh``, ``2*oh + fh``, ``k``), enough for the
matmul and convolution families: ``loom.core.affine``'s ``Affine`` and ``LinearMap``,
read by its ``parse_affine_map`` (``(m, n, k) -> (m, k)``, ``affine_map<...>``
optional; syntax errors are ``LoomError`` with the column).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from loom.core.affine import Affine, LinearMap, parse_affine_map
from loom.core.text import located_error, memoized_parser

ITERATOR_TYPES = ("parallel", "reduction")
BODY_KINDS = ("mul-add", "add", "mul", "max", "min", "copy", "relu")


# The map forms are the core ones; these names stay for the description code and its callers.
AffineSum = Affine
IndexingMap = LinearMap
parse_indexing_map = parse_affine_map


@dataclass(frozen=True)
class KernelSpec:
    """The computation: ``name`` is a linalg named op or ``generic``."""

    name: str
    dims: tuple[str, ...]
    iterator_types: tuple[str, ...]
    indexing_maps: tuple[IndexingMap, ...]
    body: str
    n_inputs: int

    @property
    def n_operands(self) -> int:
        return len(self.indexing_maps)

    @property
    def output_indices(self) -> tuple[int, ...]:
        return tuple(range(self.n_inputs, self.n_operands))

    @property
    def reduction_dims(self) -> tuple[str, ...]:
        return tuple(d for d, t in zip(self.dims, self.iterator_types) if t == "reduction")

    def renamed(self, new_dims: tuple[str, ...]) -> "KernelSpec":
        """The same kernel with its loop dims renamed positionally."""
        rename = dict(zip(self.dims, new_dims))
        maps = tuple(
            IndexingMap(
                new_dims,
                tuple(r.rename(rename.__getitem__) for r in m.results),
            )
            for m in self.indexing_maps
        )
        return KernelSpec(self.name, new_dims, self.iterator_types, maps, self.body, self.n_inputs)


@dataclass(frozen=True)
class _Named:
    dims: tuple[str, ...]
    iterators: str  # one letter per dim: p / r
    maps: tuple[str, ...]  # result lists
    operand_names: tuple[str, ...]
    body: str = "mul-add"


NAMED_KERNELS: dict[str, _Named] = {
    "matmul": _Named(("m", "n", "k"), "ppr", ("m, k", "k, n", "m, n"), ("A", "B", "C")),
    "batch_matmul": _Named(("b", "m", "n", "k"), "pppr", ("b, m, k", "b, k, n", "b, m, n"), ("A", "B", "C")),
    "matvec": _Named(("m", "k"), "pr", ("m, k", "k", "m"), ("A", "x", "y")),
    "conv_2d_nchw_fchw": _Named(
        ("b", "oc", "oh", "ow", "ic", "fh", "fw"),
        "pppprrr",
        ("b, ic, oh + fh, ow + fw", "oc, ic, fh, fw", "b, oc, oh, ow"),
        ("I", "W", "O"),
    ),
    "conv_2d_nhwc_hwcf": _Named(
        ("b", "oh", "ow", "oc", "fh", "fw", "ic"),
        "pppprrr",
        ("b, oh + fh, ow + fw, ic", "fh, fw, ic, oc", "b, oh, ow, oc"),
        ("I", "W", "O"),
    ),
    # one filter per channel: the channel is parallel (no reduction over it)
    "depthwise_conv_2d_nhwc_hwc": _Named(
        ("b", "oh", "ow", "c", "fh", "fw"),
        "pppprr",
        ("b, oh + fh, ow + fw, c", "fh, fw, c", "b, oh, ow, c"),
        ("I", "W", "O"),
    ),
}


def named_kernel(name: str) -> tuple[KernelSpec, tuple[str, ...]]:
    """The KernelSpec and default operand names of a linalg named op (``linalg.`` prefix optional)."""
    spec = NAMED_KERNELS[name.removeprefix("linalg.")]
    dims = spec.dims
    maps = tuple(parse_indexing_map(f"({', '.join(dims)}) -> ({r})") for r in spec.maps)
    iters = tuple("parallel" if c == "p" else "reduction" for c in spec.iterators)
    kernel = KernelSpec(name.removeprefix("linalg."), dims, iters, maps, spec.body, len(maps) - 1)
    return kernel, spec.operand_names


@memoized_parser
def parse_permutation(
    text: str, dims: tuple[str, ...], *, where: str | None = None, filename: str | None = None
) -> tuple[str, ...]:
    """Parse a loop permutation ``(m, n, k) -> (m, k, n)``; returns the loop order (outer first).

    The left side must list exactly ``dims`` in order; the right side must be a
    permutation of them (each dim once, nothing else).
    """
    m = parse_indexing_map(text, where=where, filename=filename)
    if m.dims != dims:
        raise located_error(
            text, text.find("("), f"the permutation must start with the kernel dims ({', '.join(dims)}), found ({', '.join(m.dims)})",
            where=where, filename=filename,
        )
    order: list[str] = []
    arrow = text.find("->")
    for res in m.results:
        name = res.single_var
        if name is None:
            raise located_error(text, arrow, f"a permutation result must be a single dim, found {str(res)!r}", where=where, filename=filename)
        if name in order:
            hits = [h.start() for h in re.finditer(rf"\b{re.escape(name)}\b", text[arrow:])]
            raise located_error(
                text, arrow + hits[1], f"dim {name!r} appears twice in the permutation", where=where, filename=filename
            )
        order.append(name)
    missing = [d for d in dims if d not in order]
    if missing:
        raise located_error(
            text, len(text.rstrip()) - 1, f"the permutation must list every dim once; missing {', '.join(missing)}",
            where=where, filename=filename,
        )
    return tuple(order)
