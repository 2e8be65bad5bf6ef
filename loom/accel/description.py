"""Accelerator and host descriptions: JSON in, frozen typed objects out.

This module is the boundary: a description file is read and checked once by
``load_description`` and nothing downstream looks at the raw JSON again. The
format (full reference with examples in ``loom/accel/FORMAT.md``; JSON Schema for
editors in ``loom/accel/schema.json``)::

    {
      "cpu": {"name": "pynq-z2", "core": "cortex-a9",
              "caches": [{"name": "L1", "size": "32KiB", "line_size": 32, "associativity": 4},
                         {"name": "L2", "size": "512KiB", "line_size": 32, "kind": "shared"}]},
             -- or a path to a JSON file holding {"cpu": {...}}, relative to this file
      "accelerators": [{
        "name": "v3_16", "version": "3.0", "description": "...", "notes": "...",
        "dma": {"dma_address": "0x40400000", "input_address": "0x16000000", "input_size": 262144,
                "output_address": "0x16400000", "output_size": 262144},   -- sizes in BYTES
        "kernel": "matmul",            -- linalg named op, or
                  {"indexing_maps": ["(m, n, k) -> (m, k)", ...], "iterator_types": [...],
                   "body": "mul-add", "inputs": 2}
        "data_type": "i32",
        "dims": ["m", "n", "k"],       -- optional: renames the kernel's loop dims in order
        "operands": [{"name": "A", "dims": ["m", "k"]}, ...],   -- optional names / check
        "tile_sizes": {"m": 16, "n": 16, "k": 16},   -- int | "full" |
                      {"multiple_of": 16, "min": 16, "max": 1023, "default": 32}
        "buffers": {"A": 4096, "B": 4096, "C": 4096},   -- accelerator capacity, elements
        "permutation": "(m, n, k) -> (m, n, k)",        -- default loop order of the tile loops
        "opcode_map": "opcode_map<s=[send_literal(15), send(0), send(1)], r=[recv(2)]>",
        "opcode_flows": {"Ns": {"flow": "(s r)", "accumulate_on_cpu": true},
                         "Cs": "((s) r)"},                -- string = flow with defaults
        "selected_flow": "Cs",
        "init_opcodes": "(reset)"      -- flow string or list of opcode ids
      }]
    }

Units: DMA sizes are bytes (a multiple of 4, what ``mmap`` takes); ``DmaConfig``
also gives them in 32-bit words. Cache sizes are bytes, given as an integer or a
string with a binary suffix (``32K``, ``32KiB``, ``1M``). Tile sizes and buffer
capacities count elements (one element = one 32-bit word for i32/f32).

Errors are ``LoomError`` with ``where`` = the JSON path (``accelerators[1].tile_sizes.m``),
``filename`` = the file, and a message saying what was expected and what was found.
Unknown keys are errors with a did-you-mean. Opcode-grammar errors also carry the
column inside the string. After parsing, ``load_description`` runs
``loom.accel.validate.validate_system`` (semantic checks) unless ``validate=False``.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from typing import Any, Mapping

from loom.accel.kernels import (
    BODY_KINDS,
    ITERATOR_TYPES,
    NAMED_KERNELS,
    AffineSum,
    IndexingMap,
    KernelSpec,
    named_kernel,
    parse_indexing_map,
    parse_permutation,
)
from loom.accel.json_node import INT32_MAX
from loom.accel.json_node import JsonNode as _Node
from loom.core.json_text import check_decoded, read_json_file
from loom.accel.model_spec import ModelSpec, parse_model
from loom.accel.opcodes import FlowId, FlowScope, OpcodeMap, did_you_mean, parse_opcode_flow, parse_opcode_map
from loom.errors import LoomError
from loom.accel.timing import TimingSpec, parse_timing

# data types the description may name; validate.py decides which the accelerators support
DATA_TYPES = ("i8", "i16", "i32", "i64", "f16", "bf16", "f32", "f64")
_TYPE_ALIASES = {"int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64",
                 "float16": "f16", "float32": "f32", "float64": "f64", "bfloat16": "bf16"}
CACHE_KINDS = ("data", "instruction", "unified", "shared")
# Size limits (FORMAT.md, "Limits"): far above any real system, low enough that loading and
# validating the largest file allowed stays under a second or two.
MAX_ACCELERATORS = 256
MAX_FLOWS = 64
MAX_CACHES = 16
MAX_OPERANDS = 16  # also loop dims and iterator types
MAX_FLOW_STEPS = 1024  # opcode ids over all flows of one accelerator


# ---------------------------------------------------------------------- the objects
@dataclass(frozen=True)
class CacheLevel:
    name: str
    size: int  # bytes
    line_size: int  # bytes
    associativity: int | None = None
    kind: str = "data"


@dataclass(frozen=True)
class HostDescription:
    name: str | None
    core: str | None
    caches: tuple[CacheLevel, ...]

    def cache(self, name: str) -> CacheLevel:
        for c in self.caches:
            if c.name == name:
                return c
        raise KeyError(name)


@dataclass(frozen=True)
class DmaConfig:
    dma_address: int
    input_address: int
    input_size: int  # bytes
    output_address: int
    output_size: int  # bytes

    @property
    def input_words(self) -> int:
        return self.input_size // 4

    @property
    def output_words(self) -> int:
        return self.output_size // 4


@dataclass(frozen=True)
class OperandSpec:
    """Operand ``index`` of the kernel: its name, subscripts (map results), role."""

    index: int
    name: str
    subscripts: tuple[AffineSum, ...]
    is_output: bool

    @property
    def rank(self) -> int:
        return len(self.subscripts)

    @property
    def used_dims(self) -> frozenset[str]:
        return frozenset().union(*(s.vars for s in self.subscripts)) if self.subscripts else frozenset()


@dataclass(frozen=True)
class DimTile:
    """How the accelerator tiles one loop dim.

    ``kind`` is ``fixed`` (``size``), ``flexible`` (a multiple of ``multiple_of`` in
    ``[min, max]``, chosen by the compiler; ``default`` is the suggested value) or
    ``full`` (the accelerator takes the whole extent: no tile loop for this dim).
    """

    dim: str
    kind: str
    size: int | None = None
    multiple_of: int = 1
    min: int = 1
    max: int | None = None
    default: int | None = None

    @property
    def nominal(self) -> int | None:
        """The size used when nothing else is chosen (None for ``full``)."""
        if self.kind == "fixed":
            return self.size
        if self.kind == "flexible":
            return self.default if self.default is not None else self.min
        return None

    def violation(self, size: int) -> str | None:
        """Why ``size`` is not an allowed tile size, or None when it is."""
        if self.kind == "fixed":
            return None if size == self.size else f"the accelerator only takes tiles of {self.size}"
        if self.kind == "full":
            return None
        if size % self.multiple_of:
            return f"must be a multiple of {self.multiple_of}"
        if size < self.min:
            return f"must be at least {self.min}"
        if self.max is not None and size > self.max:
            return f"must be at most {self.max}"
        return None


@dataclass(frozen=True)
class TileSpec:
    tiles: tuple[DimTile, ...]

    def __getitem__(self, dim: str) -> DimTile:
        for t in self.tiles:
            if t.dim == dim:
                return t
        raise KeyError(dim)

    @property
    def tiled_dims(self) -> tuple[str, ...]:
        """Dims that get a tile loop (not ``full``), in kernel order."""
        return tuple(t.dim for t in self.tiles if t.kind != "full")

    def nominal_sizes(self) -> dict[str, int | None]:
        return {t.dim: t.nominal for t in self.tiles}

    def check(self, sizes: Mapping[str, int], *, where: str = "tile_sizes", filename: str | None = None) -> None:
        """Raise a LoomError if a chosen size breaks the accelerator's constraint."""
        for dim, size in sizes.items():
            try:
                tile = self[dim]
            except KeyError:
                raise LoomError(f"unknown dim {dim!r}; expected one of {', '.join(t.dim for t in self.tiles)}",
                                where=where, filename=filename) from None
            why = tile.violation(size)
            if why:
                raise LoomError(f"tile size {size} for dim {dim!r} {why}", where=f"{where}.{dim}", filename=filename)


@dataclass(frozen=True)
class Flow:
    """A named opcode flow with the loop order it implies.

    ``loop_order`` lists all kernel dims outer to inner (the permutation's result);
    ``accumulate_on_cpu`` says the accelerator returns partial outputs that the host
    adds up (so recv may sit inside reduction loops); ``region_operands`` names
    operands whose send/recv at an outer scope moves the whole region covered by the
    inner tile loops (the conv accelerator's output plane) instead of one tile.
    """

    name: str
    scope: FlowScope
    text: str
    loop_order: tuple[str, ...]
    accumulate_on_cpu: bool = False
    region_operands: tuple[str, ...] = ()
    description: str | None = None
    where: str = ""  # JSON path of the flow text


@dataclass(frozen=True)
class AcceleratorDescription:
    name: str
    version: str
    description: str
    notes: str
    dma: DmaConfig
    kernel: KernelSpec
    data_type: str
    operands: tuple[OperandSpec, ...]
    tiles: TileSpec
    buffers: tuple[tuple[str, int], ...]  # (operand name, capacity in elements)
    opcode_map: OpcodeMap
    flows: tuple[Flow, ...]
    selected_flow: str
    init_opcodes: FlowScope | None
    loop_order: tuple[str, ...]  # default permutation (outer first)
    where: str = ""  # JSON path of this accelerator (``accelerators[0]``)
    filename: str | None = None
    opcode_map_text: str = ""  # the text as written (AST columns point into it)
    init_opcodes_text: str | None = None
    timing: "TimingSpec | None" = None  # the optional timing object (loom.accel.timing)
    model: "ModelSpec | None" = None  # the behaviour model that simulates it (loom.accel.model_spec)

    @property
    def dims(self) -> tuple[str, ...]:
        return self.kernel.dims

    def flow(self, name: str | None = None) -> Flow:
        """The named flow, or the selected one."""
        name = self.selected_flow if name is None else name
        for f in self.flows:
            if f.name == name:
                return f
        raise LoomError(f"no opcode flow named {name!r}; expected one of {', '.join(f.name for f in self.flows)}"
                        f"{did_you_mean(name, [f.name for f in self.flows])}", where=f"{self.where}.opcode_flows",
                        filename=self.filename)

    def operand(self, key: int | str) -> OperandSpec:
        for op in self.operands:
            if op.index == key or op.name == key:
                return op
        raise KeyError(key)

    def buffer_capacity(self, operand: int | str) -> int | None:
        name = self.operand(operand).name
        return dict(self.buffers).get(name)

    def path(self, *parts: str) -> str:
        return ".".join((self.where, *parts)) if self.where else ".".join(parts)


@dataclass(frozen=True)
class SystemDescription:
    host: HostDescription | None
    accelerators: tuple[AcceleratorDescription, ...]
    filename: str | None = None

    def accelerator(self, name: str) -> AcceleratorDescription:
        for a in self.accelerators:
            if a.name == name:
                return a
        names = [a.name for a in self.accelerators]
        raise LoomError(f"no accelerator named {name!r}; the description has {', '.join(names) or 'none'}"
                        f"{did_you_mean(name, names)}", filename=self.filename, where="accelerators")


# ------------------------------------------------------------------------- parsing
def _parse_cache(node: _Node) -> CacheLevel:
    f = node.fields(("name", "size"), ("line_size", "associativity", "kind"), "a cache level")
    kind = f["kind"].string() if "kind" in f else "data"
    if kind not in CACHE_KINDS:
        raise f["kind"].fail(f"expected a cache kind ({', '.join(CACHE_KINDS)}), found {kind!r}"
                             f"{did_you_mean(kind, CACHE_KINDS)}")
    return CacheLevel(
        name=f["name"].string(),
        size=f["size"].byte_size("a cache size"),
        line_size=f["line_size"].byte_size("a line size", maximum=1 << 20) if "line_size" in f else 64,
        associativity=f["associativity"].integer(minimum=1) if "associativity" in f else None,
        kind=kind,
    )


def read_json(path: str) -> Any:
    """A JSON file's content; unreadable, non-UTF-8 or invalid JSON (NaN, duplicate keys, nesting too deep,
    see ``loom.core.json_text``) is a LoomError located in the file."""
    return read_json_file(path)


def resolve_host(value: Any, base_dir: str | None, *, filename: str | None = None) -> tuple[Any, str | None]:
    """The cpu section itself and the file it is in: a ``"cpu": "host.json"`` reference (relative to the
    referring file's folder) is followed, through further references; a cycle is a LoomError."""
    node, chain = _Node(value, "cpu", filename), []
    while isinstance(node.value, str):
        path = os.path.normpath(os.path.join(base_dir or os.getcwd(), node.value))
        if not os.path.isfile(path):
            raise node.fail(f"expected the cpu description or the path of a host file, found {node.value!r} "
                            f"(no such file: {path})")
        if path in chain:
            raise node.fail(f"the host file references form a cycle: {' -> '.join([*chain, path])}")
        chain.append(path)
        data = read_json(path)
        if not isinstance(data, dict) or "cpu" not in data:
            raise node.fail(f"the host file {node.value!r} has no 'cpu' section")
        node, base_dir = _Node(data["cpu"], "cpu", path), os.path.dirname(path)
    return node.value, node.filename


def _parse_host(node: _Node, base_dir: str | None) -> HostDescription:
    if isinstance(node.value, str):  # a reference to a host file
        value, filename = resolve_host(node.value, base_dir, filename=node.filename)
        node = _Node(value, "cpu", filename)
    f = node.fields((), ("caches", "name", "core"), "the cpu description")
    # a host without data caches (a microcontroller, a soft core) lists none: no cache tiling then
    levels = f["caches"].items("a list of cache levels", limit=MAX_CACHES) if "caches" in f else []
    caches = tuple(_parse_cache(c) for c in levels)
    seen: set[str] = set()
    for i, c in enumerate(caches):
        if c.name in seen:
            raise LoomError(f"duplicate cache level name {c.name!r}", where=f"{f['caches'].path}[{i}].name",
                            filename=node.filename)
        seen.add(c.name)
    return HostDescription(
        name=f["name"].string() if "name" in f else None,
        core=f["core"].string() if "core" in f else None,
        caches=caches,
    )


# AXI DMA register space (Xilinx PG021: a 64 KiB address range; loom/runtime/backend_axi.c maps as much)
DMA_REGISTER_BYTES = 0x10000


def _parse_dma(node: _Node) -> DmaConfig:
    keys = ("dma_address", "input_address", "input_size", "output_address", "output_size")
    f = node.fields(keys, (), "the DMA configuration")
    sizes = {}
    for key in ("input_size", "output_size"):
        # the runtime and the IR carry sizes as 32-bit values; a staging buffer is at most 2 GiB
        size = f[key].byte_size("a staging buffer size in bytes", maximum=INT32_MAX + 1)
        if size % 4:
            raise f[key].fail(f"expected a size in bytes that is a multiple of 4 (whole 32-bit words), found {size}")
        sizes[key] = size
    dma = DmaConfig(f["dma_address"].address(), f["input_address"].address(), sizes["input_size"],
                    f["output_address"].address(), sizes["output_size"])
    # the three windows of physical memory the driver maps must fit 32 bits and be disjoint
    regions = [("dma_address", "the DMA registers", dma.dma_address, DMA_REGISTER_BYTES),
               ("input_address", "the input staging buffer", dma.input_address, dma.input_size),
               ("output_address", "the output staging buffer", dma.output_address, dma.output_size)]
    for key, what, start, size in regions:
        if start + size > 2**32:
            raise f[key].fail(f"{what} [0x{start:x}, 0x{start + size:x}) runs past the 32-bit address space")
    for i, (key, what, start, size) in enumerate(regions):
        for _, other, o_start, o_size in regions[:i]:
            if start < o_start + o_size and o_start < start + size:
                raise f[key].fail(f"{what} [0x{start:x}, 0x{start + size:x}) overlaps {other} "
                                  f"[0x{o_start:x}, 0x{o_start + o_size:x})")
    return dma


def _parse_kernel(node: _Node) -> tuple[KernelSpec | None, tuple[str, ...] | None]:
    """The kernel and default operand names (None when operands must name them)."""
    if isinstance(node.value, str):
        name = node.value.removeprefix("linalg.")
        if name not in NAMED_KERNELS:
            raise node.fail(f"unknown kernel {node.value!r}; expected a linalg named op "
                            f"({', '.join(NAMED_KERNELS)}) or an object with indexing_maps"
                            f"{did_you_mean(name, NAMED_KERNELS)}")
        return named_kernel(name)
    f = node.fields(("iterator_types", "body"), ("indexing_maps", "inputs", "name"), "the kernel signature")
    iters = []
    for item in f["iterator_types"].items("a list of iterator types", non_empty=True, limit=MAX_OPERANDS):
        it = item.string()
        if it not in ITERATOR_TYPES:
            raise item.fail(f"expected an iterator type ({' or '.join(ITERATOR_TYPES)}), found {it!r}"
                            f"{did_you_mean(it, ITERATOR_TYPES)}")
        iters.append(it)
    body = f["body"].string()
    if body not in BODY_KINDS:
        raise f["body"].fail(f"expected a body kind ({', '.join(BODY_KINDS)}), found {body!r}{did_you_mean(body, BODY_KINDS)}")
    maps: list[IndexingMap] = []
    if "indexing_maps" in f:
        for item in f["indexing_maps"].items("a list of indexing maps", non_empty=True, limit=MAX_OPERANDS):
            m = parse_indexing_map(item.string("an indexing map such as \"(m, n, k) -> (m, k)\""),
                                   where=item.path, filename=node.filename)
            if maps and m.dims != maps[0].dims:
                raise item.fail(f"expected the same loop dims as the first map ({', '.join(maps[0].dims)}), "
                                f"found ({', '.join(m.dims)})")
            if len(m.dims) != len(iters):
                raise item.fail(f"the map has {len(m.dims)} loop dims but iterator_types has {len(iters)} entries")
            maps.append(m)
    n_maps = len(maps)
    inputs = f["inputs"].integer(minimum=1) if "inputs" in f else None
    name = f["name"].string() if "name" in f else "generic"
    if not maps:
        # maps come from "operands" later
        return KernelSpec(name, (), tuple(iters), (), body, inputs or 0), None
    if inputs is not None and inputs >= n_maps:
        raise f["inputs"].fail(f"expected fewer inputs than operands ({n_maps}), found {inputs}")
    kernel = KernelSpec(name, maps[0].dims, tuple(iters), tuple(maps), body, inputs if inputs else n_maps - 1)
    names = tuple("ABCDEFGH"[i] if i < 8 else f"arg{i}" for i in range(n_maps))
    return kernel, names


def parse_kernel(value: Any, path: str = "kernel", filename: str | None = None) -> KernelSpec:
    """A kernel given as a named op or a signature with indexing_maps (a model's declaration)."""
    kernel, _ = _parse_kernel(_Node(value, path, filename))
    if not kernel.indexing_maps:
        raise LoomError("expected a kernel with indexing_maps", where=path, filename=filename)
    return kernel


def _parse_operands(node: _Node, kernel: KernelSpec, default_names: tuple[str, ...] | None,
                    dims: tuple[str, ...] | None, kernel_node: _Node) -> tuple[KernelSpec, tuple[OperandSpec, ...]]:
    """Operand names/dims: checked against the kernel maps, or building them."""
    items = node.items("a list of operands", non_empty=True, limit=MAX_OPERANDS) if node is not None else None
    if not kernel.indexing_maps:
        # an explicit signature without maps: operands give the subscripts
        if items is None:
            raise kernel_node.fail("the kernel has no indexing_maps, so the accelerator needs 'operands' "
                                   "(name and dims of each operand)")
        if dims is None:
            raise kernel_node.fail("the kernel has no indexing_maps, so the accelerator needs 'dims'")
        if len(dims) != len(kernel.iterator_types):
            raise kernel_node.fail(f"'dims' has {len(dims)} names but iterator_types has "
                                   f"{len(kernel.iterator_types)} entries")
        maps = []
        for item in items:
            f = item.fields(("name", "dims"), (), "an operand")
            subs = [s.string("a dim name or an affine expression") for s in f["dims"].items("a list of dims")]
            maps.append(parse_indexing_map(f"({', '.join(dims)}) -> ({', '.join(subs)})", where=f["dims"].path,
                                           filename=node.filename))
        inputs = kernel.n_inputs or len(maps) - 1
        if inputs >= len(maps):
            raise kernel_node.fail(f"expected fewer inputs than operands ({len(maps)}), found {inputs}")
        kernel = KernelSpec(kernel.name, tuple(dims), kernel.iterator_types, tuple(maps), kernel.body, inputs)
        default_names = tuple(i.value["name"] for i in items)
    elif dims is not None:
        if len(dims) != len(kernel.dims):
            raise LoomError(f"expected {len(kernel.dims)} dim names for kernel {kernel.name!r} "
                            f"({', '.join(kernel.dims)}), found {len(dims)}",
                            where=kernel_node.path.rsplit(".", 1)[0] + ".dims", filename=node.filename if node else kernel_node.filename)
        kernel = kernel.renamed(tuple(dims))
    names = list(default_names or ())
    if items is not None:
        if len(items) != kernel.n_operands:
            raise node.fail(f"expected {kernel.n_operands} operands for kernel {kernel.name!r}, found {len(items)}")
        for i, item in enumerate(items):
            f = item.fields(("name",), ("dims",), "an operand")
            names[i] = f["name"].string()
            if "dims" in f:
                subs = [s.string("a dim name or an affine expression") for s in f["dims"].items("a list of dims")]
                given = parse_indexing_map(f"({', '.join(kernel.dims)}) -> ({', '.join(subs)})",
                                           where=f["dims"].path, filename=node.filename)
                if given.results != kernel.indexing_maps[i].results:
                    expected = ", ".join(str(r) for r in kernel.indexing_maps[i].results)
                    raise f["dims"].fail(f"operand {names[i]!r} of kernel {kernel.name!r} is indexed by "
                                         f"[{expected}], found [{', '.join(subs)}]")
    for i, name in enumerate(names):
        if names.index(name) != i:
            raise LoomError(f"duplicate operand name {name!r}", where=f"{node.path}[{i}].name" if node else None,
                            filename=kernel_node.filename)
    operands = tuple(
        OperandSpec(i, names[i], m.results, i in kernel.output_indices) for i, m in enumerate(kernel.indexing_maps)
    )
    return kernel, operands


def _parse_tiles(node: _Node, kernel: KernelSpec) -> TileSpec:
    pairs = dict(node.entries("the tile sizes"))
    for key, child in pairs.items():
        if key not in kernel.dims:
            raise child.fail(f"unknown dim {key!r}; the kernel's dims are {', '.join(kernel.dims)}"
                             f"{did_you_mean(key, kernel.dims)}")
    tiles = []
    for dim in kernel.dims:
        if dim not in pairs:
            raise node.fail(f"missing tile size for dim {dim!r} (give an integer, \"full\" or a flexible range)")
        child = pairs[dim]
        value = child.value
        if isinstance(value, str):
            if value != "full":
                raise child.expected("a tile size: an integer, \"full\" or {\"multiple_of\": ...}")
            tiles.append(DimTile(dim, "full"))
        elif isinstance(value, dict):
            f = child.fields((), ("multiple_of", "min", "max", "default"), "a flexible tile size")
            step = f["multiple_of"].integer(minimum=1) if "multiple_of" in f else 1
            low = f["min"].integer(minimum=1) if "min" in f else step
            high = f["max"].integer(minimum=1) if "max" in f else None
            if high is not None and high < low:
                raise f["max"].fail(f"expected max >= min ({low}), found {high}")
            tile = DimTile(dim, "flexible", None, step, low, high, None)
            if "default" in f:
                default = f["default"].integer(minimum=1)
                why = tile.violation(default)
                if why:
                    raise f["default"].fail(f"default tile size {default} {why}")
                tile = DimTile(dim, "flexible", None, step, low, high, default)
            tiles.append(tile)
        else:
            if child.whole_number() is not None and child.whole_number() < 1:  # type: ignore[operator]
                raise child.fail(f"expected a tile size >= 1, found {child.whole_number()}")
            tiles.append(DimTile(dim, "fixed", child.integer("a tile size: an integer, \"full\" or a flexible range",
                                                            minimum=1)))
    return TileSpec(tuple(tiles))


def _parse_flow(name: str, node: _Node, kernel: KernelSpec, default_order: tuple[str, ...],
                operands: tuple[OperandSpec, ...]) -> Flow:
    if isinstance(node.value, str):
        text = node.value
        return Flow(name, parse_opcode_flow(text, where=node.path, filename=node.filename), text, default_order,
                    where=node.path)
    f = node.fields(("flow",), ("permutation", "accumulate_on_cpu", "region_operands", "description"), "an opcode flow")
    text = f["flow"].string("a flow such as \"(s (c r))\"")
    scope = parse_opcode_flow(text, where=f["flow"].path, filename=node.filename)
    order = default_order
    if "permutation" in f:
        order = parse_permutation(f["permutation"].string("a permutation such as \"(m, n, k) -> (m, k, n)\""),
                                  kernel.dims, where=f["permutation"].path, filename=node.filename)
    regions: list[str] = []
    if "region_operands" in f:
        names = [o.name for o in operands]
        for item in f["region_operands"].items("a list of operand names"):
            op = item.string("an operand name")
            if op not in names:
                raise item.fail(f"unknown operand {op!r}; expected one of {', '.join(names)}{did_you_mean(op, names)}")
            regions.append(op)
    return Flow(
        name, scope, text, order,
        accumulate_on_cpu=f["accumulate_on_cpu"].boolean() if "accumulate_on_cpu" in f else False,
        region_operands=tuple(regions),
        description=f["description"].string() if "description" in f else None,
        where=f["flow"].path,
    )


# operand counts (inputs, outputs) each body kind computes with (loom.accel.matching.body_kind)
_BODY_ARITY = {"mul-add": (2, 1), "add": (2, 1), "mul": (2, 1), "max": (2, 1), "min": (2, 1), "copy": (1, 1), "relu": (1, 1)}
_BODY_TEXT = {"mul-add": "out + in0 * in1", "add": "in0 + in1", "mul": "in0 * in1", "max": "max(in0, in1)",
              "min": "min(in0, in1)", "copy": "in0", "relu": "max(in0, 0)"}


def _check_body_arity(kernel: KernelSpec, node: _Node) -> None:
    """A body needs its operands: ``max`` of one input (a ReLU, max(x, 0)) matches no linalg op."""
    want = _BODY_ARITY.get(kernel.body)
    have = (kernel.n_inputs, kernel.n_operands - kernel.n_inputs)
    if want is None or have == want:
        return
    at = isinstance(node.value, dict) and "body" in node.value
    raise LoomError(f"body {kernel.body!r} computes {_BODY_TEXT[kernel.body]}: {want[0]} input(s) and {want[1]} "
                    f"output, but the kernel has {have[0]} input(s) and {have[1]} output(s) "
                    f"({kernel.n_operands} indexing maps / operands"
                    + (", inputs given" if isinstance(node.value, dict) and "inputs" in node.value else "")
                    + ("); a ReLU, max(x, 0), is the body \"relu\"" if kernel.body == "max" and have == (1, 1) else ")"),
                    where=f"{node.path}.body" if at else node.path, filename=node.filename)


# words of assign= ("NAME,-,*" per op, or "cost"): no accelerator may be called so
RESERVED_NAMES = ("-", "*", "cost")

_ACCEL_REQUIRED = ("name", "dma", "kernel", "data_type", "tile_sizes", "opcode_map", "opcode_flows")
_ACCEL_OPTIONAL = ("version", "description", "notes", "dims", "operands", "buffers", "permutation",
                   "selected_flow", "init_opcodes", "timing", "model", "opcode_semantics")


def _parse_accelerator(node: _Node, base_dir: str | None = None) -> AcceleratorDescription:
    f = node.fields(_ACCEL_REQUIRED, _ACCEL_OPTIONAL, "an accelerator")
    filename = node.filename
    name = f["name"].string()
    # names are free text, but one must be selectable (--name '' selects none) and not be an assign= keyword
    if not name.strip() or name in RESERVED_NAMES:
        raise f["name"].fail(f"expected an accelerator name (not blank, not '-', '*' or 'cost', which assign= "
                             f"reserves), found {name!r}")
    version = f.get("version")
    if version is not None and (isinstance(version.value, bool) or not isinstance(version.value, (str, int, float))):
        raise version.expected("a version (a string or a number)")
    dma = _parse_dma(f["dma"])
    kernel, default_names = _parse_kernel(f["kernel"])
    dims = None
    if "dims" in f:
        names = f["dims"].items("a list of dim names", non_empty=True, limit=MAX_OPERANDS)
        dims = tuple(d.string("a dim name") for d in names)
        for i, d in enumerate(dims):
            if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", d):
                raise LoomError(f"expected a dim name (letters, digits, _), found {d!r}", where=f"{f['dims'].path}[{i}]",
                                filename=filename)
            if dims.index(d) != i:
                raise LoomError(f"dim {d!r} is listed twice", where=f"{f['dims'].path}[{i}]", filename=filename)
    kernel, operands = _parse_operands(f.get("operands"), kernel, default_names, dims, f["kernel"])
    _check_body_arity(kernel, f["kernel"])
    dtype_node = f["data_type"]
    dtype = dtype_node.string("a data type such as \"i32\"")
    dtype = _TYPE_ALIASES.get(dtype, dtype)
    if dtype not in DATA_TYPES:
        raise dtype_node.fail(f"unknown data type {dtype_node.value!r}; expected one of {', '.join(DATA_TYPES)}"
                              f"{did_you_mean(dtype, DATA_TYPES)}")
    tiles = _parse_tiles(f["tile_sizes"], kernel)
    buffers: list[tuple[str, int]] = []
    if "buffers" in f:
        names = [o.name for o in operands]
        for key, child in f["buffers"].entries("the buffer capacities"):
            if key not in names:
                raise child.fail(f"unknown operand {key!r}; the kernel's operands are {', '.join(names)}"
                                 f"{did_you_mean(key, names)}")
            buffers.append((key, child.integer("a capacity in elements", minimum=1)))
    order = kernel.dims
    if "permutation" in f:
        order = parse_permutation(f["permutation"].string("a permutation such as \"(m, n, k) -> (m, k, n)\""),
                                  kernel.dims, where=f["permutation"].path, filename=filename)
    map_node = f["opcode_map"]
    opcode_map = parse_opcode_map(map_node.string("an opcode map such as \"opcode_map<s=[send(0)]>\""),
                                  where=map_node.path, filename=filename)
    flow_nodes = f["opcode_flows"].entries("the opcode flows", limit=MAX_FLOWS)
    flows = tuple(_parse_flow(k, v, kernel, order, operands) for k, v in flow_nodes)
    if not flows:
        raise f["opcode_flows"].fail("expected at least one opcode flow, found an empty object")
    steps = 0
    for fl in flows:  # placement work grows with the ids of all flows: bounded per accelerator
        steps += sum(1 for _ in fl.scope.ids())
        if steps > MAX_FLOW_STEPS:
            raise LoomError(f"the flows of this accelerator list more than {MAX_FLOW_STEPS} opcodes in all "
                            f"(flow {fl.name!r} passes the limit)", where=fl.where, filename=filename)
    flow_names = [fl.name for fl in flows]
    if "selected_flow" in f:
        selected = f["selected_flow"].string()
        if selected not in flow_names:
            raise f["selected_flow"].fail(f"unknown flow {selected!r}; expected one of {', '.join(flow_names)}"
                                          f"{did_you_mean(selected, flow_names)}")
    elif len(flows) == 1:
        selected = flows[0].name
    else:
        raise node.fail(f"missing required key 'selected_flow' (the description has {len(flows)} flows: "
                        f"{', '.join(flow_names)})")
    init = init_text = None
    if "init_opcodes" in f:
        init_node = f["init_opcodes"]
        if isinstance(init_node.value, list):
            ids = [FlowId(i.string("an opcode id")) for i in init_node.items("a list of opcode ids", non_empty=True,
                                                                               limit=MAX_FLOW_STEPS)]
            init = FlowScope(tuple(ids))
        else:
            init_text = init_node.string("a flow string or a list of opcode ids")
            init = parse_opcode_flow(init_text, where=init_node.path, filename=filename, keyword="init_opcodes")
    model = None
    if "model" in f:
        model = parse_model(f["model"], f.get("opcode_semantics"), opcode_map, kernel.n_operands,
                            kernel.output_indices, base_dir)
    elif "opcode_semantics" in f:
        raise f["opcode_semantics"].fail("\"opcode_semantics\" needs \"model\": \"generic\" next to it")
    return AcceleratorDescription(
        name=name,
        version=str(version.value) if version is not None else "",
        description=f["description"].string() if "description" in f else "",
        notes=f["notes"].text() if "notes" in f else "",
        dma=dma, kernel=kernel, data_type=dtype, operands=operands, tiles=tiles, buffers=tuple(buffers),
        opcode_map=opcode_map, flows=flows, selected_flow=selected, init_opcodes=init, loop_order=order,
        where=node.path, filename=filename, opcode_map_text=map_node.value, init_opcodes_text=init_text,
        timing=parse_timing(f.get("timing")), model=model,
    )


def parse_description(data: Any, *, filename: str | None = None, base_dir: str | None = None) -> SystemDescription:
    """Turn already-decoded JSON into a SystemDescription (syntax and structure only)."""
    root = _Node(data, "", filename)
    f = root.fields((), ("cpu", "accelerators", "notes", "$schema"), "an accelerator description file")
    host = _parse_host(f["cpu"], base_dir) if "cpu" in f else None
    accels = tuple(_parse_accelerator(a, base_dir) for a in f["accelerators"].items("a list of accelerators",
                                                                          limit=MAX_ACCELERATORS)) \
        if "accelerators" in f else ()
    seen: dict[str, int] = {}
    for i, a in enumerate(accels):
        if a.name in seen:
            raise LoomError(f"duplicate accelerator name {a.name!r} (also accelerators[{seen[a.name]}])",
                            where=f"accelerators[{i}].name", filename=filename)
        seen[a.name] = i
    if host is None and not accels:
        raise root.fail("expected a 'cpu' section or an 'accelerators' list, found neither")
    return SystemDescription(host, accels, filename)


def load_description(source: "str | os.PathLike | Mapping[str, Any]", *, validate: bool = True) -> SystemDescription:
    """Load a description from a JSON file path or an already-decoded dict, and validate it."""
    if not isinstance(source, (str, os.PathLike)):
        # already-decoded JSON (a dict, or anything else, which gets a located error)
        data = dict(source) if isinstance(source, Mapping) else source
        check_decoded(data)
        system = parse_description(data)
    else:
        path = os.fspath(source)
        data = read_json(path)
        system = parse_description(data, filename=path, base_dir=os.path.dirname(os.path.abspath(path)))
    if validate:
        from loom.accel.validate import validate_system

        validate_system(system)
    return system
