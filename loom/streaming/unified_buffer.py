"""Unified buffers (thesis §4.2) as first-class objects backed by isl.

A buffer has write ports and read ports. Each port has an iteration domain
(isl set over the port's loop variables, index-shifted so the domain starts
at 0), an access map (isl map from iteration point to buffer index) and a
cycle schedule (isl map from iteration point to the cycle of the operation).
``capacity`` is the maximum number of live values (written, not yet read for
the last time), filled in by the scheduler.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import islpy as isl


def _names(n):
    return ["x", "y", "z", "w", "v", "u"][:n] if n <= 6 else [f"i{k}" for k in range(n)]


def _lin(coeffs, const, names):
    terms = []
    for c, v in zip(coeffs, names):
        if c == 0:
            continue
        terms.append(v if c == 1 else f"{c}{v}" if c > 0 else f"-{-c}{v}" if c != -1 else f"-{v}")
    s = " + ".join(terms).replace("+ -", "- ")
    if const or not terms:
        s = f"{const} + {s}" if terms else str(const)
    return s


def _quasi(coeffs, const, div, names):
    s = _lin(coeffs, const, names)
    return s if div == 1 else f"floor(({s})/{div})"


@dataclass
class CycleSchedule:
    """t(p) = offset + sum_k strides[k] * p_k (+ sum of c * floor(p_k / m) over ``floors``), p_0 -> floor(p_0 / lanes).

    ``floors`` (dim, m, c) terms come from coarse-grain loops split by m (compute sharing, thesis §5.2:
    a stage computing m rows per coarse iteration steps c extra cycles every m rows)."""

    offset: int
    strides: tuple
    lanes: int = 1
    floors: tuple = ()

    def text(self, names) -> str:
        terms = []
        for k in reversed(range(len(self.strides))):
            s = self.strides[k]
            if s == 0:
                continue
            if k or self.lanes == 1:
                terms.append(names[k] if s == 1 else f"{s}{names[k]}")
            else:  # isl reads "4*floor(x/2)", not "4floor(x/2)"
                v = f"floor({names[k]}/{self.lanes})"
                terms.append(v if s == 1 else f"{s}*{v}")
        for k, m, c in self.floors:
            terms.append(f"{c}*floor({names[k]}/{m})")
        body = " + ".join(terms)
        if self.offset or not terms:
            body = f"{self.offset} + {body}" if terms else str(self.offset)
        return body

    def blocked(self, k) -> int:
        """Values of time dim k computed per step when it advances in blocks (``unroll(y, n)``: stride 0 and a
        ``floors`` term on k, so rows k * n .. k * n + n - 1 share a cycle); 1 otherwise."""
        if self.strides[k]:
            return 1
        return next((m for j, m, _ in self.floors if j == k), 1)

    def in_blocks(self, k) -> bool:
        """Dim k advances in blocks within its steps (of any size: ``unroll(c, 1)`` is one channel a cycle)."""
        return self.strides[k] == 0 and any(j == k for j, *_ in self.floors)

    def in_space(self, k) -> bool:
        """Dim k is unrolled in space (all of it in one cycle): stride 0 and not advancing in blocks."""
        return self.strides[k] == 0 and not self.in_blocks(k)

    def copies(self, k, extent) -> int:
        """Values of dim k computed in one cycle (lanes, rows of a block, a dimension unrolled in space)."""
        if self.in_space(k):
            return extent
        n = self.blocked(k)
        return min(self.lanes, extent) if (k == 0 and self.lanes > 1) else min(n, extent)

    def times(self, grids):
        """Cycle of every point given per-dimension coordinate arrays (broadcastable)."""
        t = self.offset
        for k, (s, g) in enumerate(zip(self.strides, grids)):
            if s == 0:
                continue
            t = t + s * ((g // self.lanes) if (k == 0 and self.lanes > 1) else g)
        for k, m, c in self.floors:
            t = t + c * (grids[k] // m)
        return t


@dataclass
class Port:
    name: str  # "in" or the reading stage with a port number, e.g. "conv1#4"
    direction: str  # "in" (write) or "out" (read)
    stage: str  # the stage (compute kernel or host) on the other side
    extents: tuple  # iteration domain box, starting at 0
    access: tuple  # (matrix rows, offsets): index_j = floor((sum_k A[j][k] p_k + c_j) / d_j)
    schedule: CycleSchedule
    divisors: tuple | None = None  # d_j (None: all 1, an affine access); > 1 for up-sampling reads

    def divs(self) -> tuple:
        return self.divisors or (1,) * len(self.access[1])

    def domain_text(self) -> str:
        names = _names(len(self.extents))
        return " and ".join(f"0 <= {v} <= {e - 1}" for v, e in zip(names, self.extents))

    def loop_names(self) -> list[str]:
        return _names(len(self.extents))

    def index_texts(self) -> list[str]:
        """The buffer index the port touches, one affine expression per buffer dimension."""
        names = _names(len(self.extents))
        rows, offs = self.access
        return [_quasi(r, c, d, names) for r, c, d in zip(rows, offs, self.divs())]

    def access_text(self, buffer: str) -> str:
        return f"{buffer}(" + ", ".join(self.index_texts()) + ")"

    def isl_space_name(self) -> str:
        """An isl tuple name for the port's iteration space (stage and direction)."""
        return self._tuple()

    def schedule_text(self) -> str:
        return self.schedule.text(_names(len(self.extents)))

    @property
    def domain(self) -> isl.Set:
        names = _names(len(self.extents))
        return isl.Set(f"{{ {self._tuple()}[{', '.join(names)}] : {self.domain_text()} }}")

    @property
    def access_map(self) -> isl.Map:
        names = _names(len(self.extents))
        idx = ", ".join(self.index_texts())
        return isl.Map(f"{{ {self._tuple()}[{', '.join(names)}] -> buf[{idx}] : {self.domain_text()} }}")

    @property
    def schedule_map(self) -> isl.Map:
        names = _names(len(self.extents))
        return isl.Map(f"{{ {self._tuple()}[{', '.join(names)}] -> [{self.schedule_text()}] : "
                       f"{self.domain_text()} }}")

    def _tuple(self):
        return "".join(ch if ch.isalnum() else "_" for ch in f"{self.stage}_{self.direction}")

    @property
    def count(self) -> int:
        n = 1
        for e in self.extents:
            n *= e
        return n


@dataclass
class UnifiedBuffer:
    name: str
    dims: int
    extents: tuple  # stored index space (the producer's domain)
    write_ports: list = field(default_factory=list)
    read_ports: list = field(default_factory=list)
    capacity: int | None = None
    kind: str = "buffer"  # "wire" when capacity is 0, "stream" for host inputs
    memory_type: str | None = None  # store_in() hint (GLB, MemoryTile, ROM, ...)

    @property
    def ports(self):
        return self.write_ports + self.read_ports

    def rows(self):
        out = []
        for p in self.ports:
            out.append((self.name, p.name, p.domain_text(), p.access_text(self.name), p.schedule_text()))
        return out


def format_table(buffers) -> str:
    """Buffers as thesis Table 4.1: buffer, port, domain, access map, schedule."""
    rows = [("buffer", "port", "domain", "access", "schedule")]
    for b in buffers:
        rows.extend(b.rows())
    widths = [max(len(r[i]) for r in rows) for i in range(5)]
    lines = ["  ".join(c.ljust(widths[i]) for i, c in enumerate(r)).rstrip() for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    caps = ", ".join(f"{b.name} {b.capacity}" for b in buffers)
    lines.append(f"capacities: {caps}")
    return "\n".join(lines)
