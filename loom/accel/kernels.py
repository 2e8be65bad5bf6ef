"""Kernels an accelerator implements: indexing maps, iterator types, body kind.

A kernel is what ``linalg.generic`` carries: one indexing map per operand (loop
dims -> operand subscripts), one iterator type per loop dim, and the kind of
scalar body. Named linalg ops are expanded from ``NAMED_KERNELS``. Map results
are affine sums of dims (``oh + fh``, ``2*oh + fh``, ``k``), enough for the
matmul and convolution families.

Map text: ``(m, n, k) -> (m, k)``, optionally wrapped in ``affine_map<...>``.
Syntax errors are ``LoomError`` with the column of the offending character.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from loom.accel.opcodes import TextReader, did_you_mean, located_error

ITERATOR_TYPES = ("parallel", "reduction")
BODY_KINDS = ("mul-add", "add", "mul", "max", "min", "copy")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True)
class AffineSum:
    """``sum(coef * dim) + constant``; ``terms`` keep the textual order."""

    terms: tuple[tuple[str, int], ...]
    constant: int = 0

    @property
    def dims(self) -> frozenset[str]:
        return frozenset(d for d, c in self.terms if c != 0)

    @property
    def single_dim(self) -> str | None:
        """The dim when the expression is exactly one dim (a projection result)."""
        if self.constant == 0 and len(self.terms) == 1 and self.terms[0][1] == 1:
            return self.terms[0][0]
        return None

    def __str__(self) -> str:
        parts = []
        for d, c in self.terms:
            term = d if abs(c) == 1 else f"{abs(c)} * {d}"
            parts.append(("- " if c < 0 else "+ ") + term)
        if self.constant or not parts:
            parts.append(("- " if self.constant < 0 else "+ ") + str(abs(self.constant)))
        text = " ".join(parts)
        return text[2:] if text.startswith("+ ") else "-" + text[2:]


@dataclass(frozen=True)
class IndexingMap:
    dims: tuple[str, ...]
    results: tuple[AffineSum, ...]

    @property
    def rank(self) -> int:
        return len(self.results)

    @property
    def used_dims(self) -> frozenset[str]:
        return frozenset().union(*(r.dims for r in self.results)) if self.results else frozenset()

    def __str__(self) -> str:
        return f"({', '.join(self.dims)}) -> ({', '.join(str(r) for r in self.results)})"


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
                tuple(AffineSum(tuple((rename[d], c) for d, c in r.terms), r.constant) for r in m.results),
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
}


def named_kernel(name: str) -> tuple[KernelSpec, tuple[str, ...]]:
    """The KernelSpec and default operand names of a linalg named op (``linalg.`` prefix optional)."""
    spec = NAMED_KERNELS[name.removeprefix("linalg.")]
    dims = spec.dims
    maps = tuple(parse_indexing_map(f"({', '.join(dims)}) -> ({r})") for r in spec.maps)
    iters = tuple("parallel" if c == "p" else "reduction" for c in spec.iterators)
    kernel = KernelSpec(name.removeprefix("linalg."), dims, iters, maps, spec.body, len(maps) - 1)
    return kernel, spec.operand_names


# --------------------------------------------------------------------- map parsing
class _MapReader(TextReader):
    _INTEGER = re.compile(r"[0-9]+")

    def name(self) -> str | None:
        return self.match(_NAME)

    def integer(self) -> int | None:
        digits = self.match(self._INTEGER)
        return None if digits is None else int(digits)


def _parse_dim_list(r: _MapReader) -> tuple[str, ...]:
    r.expect("(", "'(' to open the list of loop dims")
    dims: list[str] = []
    if r.accept(")"):
        return ()
    while True:
        start = r.pos
        name = r.name()
        if name is None:
            raise r.fail(f"expected a dim name but found {r.found()}")
        if name in dims:
            raise r.fail(f"dim {name!r} is listed twice", start)
        dims.append(name)
        if r.accept(")"):
            return tuple(dims)
        r.expect(",", "',' or ')'")


def _parse_term(r: _MapReader, dims: tuple[str, ...]) -> tuple[str | None, int]:
    r.peek()
    start = r.pos
    coef = r.integer()
    if coef is not None:
        if not r.accept("*"):
            return None, coef
        r.peek()
        start = r.pos
    name = r.name()
    if name is None:
        raise r.fail(f"expected a dim name or an integer but found {r.found()}")
    if name not in dims:
        raise r.fail(f"unknown dim {name!r}; the map's dims are ({', '.join(dims)}){did_you_mean(name, dims)}", start)
    if coef is None and r.accept("*"):
        coef = r.integer()
        if coef is None:
            raise r.fail(f"expected an integer after '*' but found {r.found()}")
    return name, 1 if coef is None else coef


def _parse_sum(r: _MapReader, dims: tuple[str, ...]) -> AffineSum:
    sign = -1 if r.accept("-") else 1
    terms: dict[str, int] = {}
    constant = 0
    while True:
        dim, value = _parse_term(r, dims)
        if dim is None:
            constant += sign * value
        else:
            terms[dim] = terms.get(dim, 0) + sign * value
        if r.accept("+"):
            sign = 1
        elif r.accept("-"):
            sign = -1
        else:
            return AffineSum(tuple(terms.items()), constant)


def parse_indexing_map(text: str, *, where: str | None = None, filename: str | None = None) -> IndexingMap:
    """Parse ``(d0, d1) -> (expr, ...)``, ``affine_map<...>`` wrapper optional."""
    r = _MapReader(text, where, filename)
    wrapped = r.accept("affine_map")
    if wrapped:
        r.expect("<")
    dims = _parse_dim_list(r)
    r.expect("->", "'->' after the list of loop dims")
    r.expect("(", "'(' to open the list of results")
    results: list[AffineSum] = []
    if not r.accept(")"):
        while True:
            results.append(_parse_sum(r, dims))
            if r.accept(")"):
                break
            r.expect(",", "',' or ')'")
    if wrapped:
        r.expect(">")
    if r.peek():
        raise r.fail(f"expected the end of the map but found {r.found()}")
    return IndexingMap(dims, tuple(results))


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
        name = res.single_dim
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
