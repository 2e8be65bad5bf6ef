"""The ``accel`` dialect: host-side accelerator transactions (paper Fig. 9) and the
attributes through which the accelerator passes hand over their decisions.

Ops stage data into the DMA input buffer and read it back from the output buffer.
Staging ops take the current word offset in the buffer (``i32``) and return the
offset after what they wrote, so several sends batch into one DMA transaction;
``flush_send`` starts that transaction and waits for it.

=====================  ==========================================================
op (custom syntax)     meaning
=====================  ==========================================================
``init_dma``           ``accel.init_dma %dma, %in, %in_size, %out, %out_size``
                       (i32) set up the engine and staging buffers; sizes in bytes;
                       once per application, paired with ``free_dma``
``free_dma``           ``accel.free_dma``: release the engine and buffers
``send_literal``       ``%o' = accel.send_literal %value, %o``: one literal word
``send``               ``%o' = accel.send %tile, %o [padded [16, 16]] : memref<..>``:
                       copy a (strided) tile of i32/f32 words; ``padded`` (-1: as is)
                       is the shape of the staging block the tile is zero-padded to
``send_dim``           ``%o' = accel.send_dim %tile[1], %o : memref<..>``: a dim's size
``send_idx``           ``%o' = accel.send_idx %index, %o``: one index as a word
``flush_send``         ``%z = accel.flush_send %length``: send the staged words, wait
``start_send``/``wait_send``   split form of ``flush_send`` (for overlap)
``start_recv``         ``accel.start_recv %length``: receive words into the output buffer
``wait_recv``          wait for the receive started by ``start_recv``
``recv``               ``%o' = accel.recv %tile, %o "accumulate" [padded [..]] : memref<..>``:
                       copy words from the output buffer at the offset into the tile;
                       mode "accumulate" (tile += words) or "replace" (tile = words).
=====================  ==========================================================

Attributes (the IR is the only hand-off between the passes; each verifies itself):

``#accel.accelerator<"v3_16", "{...json...}">``
    the accelerator a matched op runs on: its name and the canonical JSON of the
    validated description (``{"cpu": {...}, "accelerators": [{...this one...}]}``),
    so a stage file carries everything a later pass reads, on any machine.
    ``loom.passes.accel_ir.accelerator_of`` decodes it with ``loom.accel``'s parser.
``#accel.plan<flow "As", dims [m, n, k], tiles [16, 16, 16], cache [64, 0, 64], permutation [0, 2, 1]>``
    the plan of a matched op: flow, accelerator dim name of each op loop, the
    accelerator tile (0: "full", no tile loop) and CPU-cache tile (0: none) per
    loop, and the tile-loop order (outer first) as loop indices.
``#accel.loop<tile "m">`` / ``#accel.loop<cache "m">``
    the role of an ``scf.for`` made by ``accel-tile``: an accelerator tile loop or a
    cache loop, over accelerator dim ``m``.

The custom syntax above is loom's (xDSL parses it). Printed in generic form
(``Printer(print_generic_format=True)``) a module using these ops and attributes
parses in upstream ``mlir-opt --allow-unregistered-dialect`` (the attributes then
are opaque dialect attributes).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from xdsl.dialects.builtin import (
    I64,
    ArrayAttr,
    DenseArrayBase,
    Float32Type,
    IndexType,
    IntAttr,
    IntegerAttr,
    IntegerType,
    MemRefType,
    StringAttr,
    i32,
    i64,
)
from xdsl.ir import Attribute, Dialect, Operation, ParametrizedAttribute, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
)
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

RECV_MODES = ("accumulate", "replace")
LOOP_ROLES = ("tile", "cache", "batch")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


# ------------------------------------------------------------------------------ attributes
def _quoted(text: str) -> str:
    """A string literal with ``\\"`` for quotes (xDSL's default ``\\22`` makes embedded JSON unreadable);
    both xDSL and upstream MLIR read it."""
    out = ['"']
    for byte in text.encode("utf-8"):
        if byte == 0x5C:
            out.append("\\\\")
        elif byte == 0x22:
            out.append('\\"')
        elif byte < 0x20 or byte > 0x7E:
            out.append(f"\\{byte:02X}")
        else:
            out.append(chr(byte))
    return "".join(out) + '"'


def _parse_text(parser: AttrParser, what: str) -> str:
    """A string literal; non-ASCII text with escapes lexes as a bytes literal, read as UTF-8."""
    text = parser.parse_optional_str_literal()
    if text is not None:
        return text
    raw = parser.parse_optional_bytes_literal()
    if raw is None:
        parser.raise_error(f"expected {what} (a string literal)")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        parser.raise_error(f"expected {what} as UTF-8 text")


def _ints(values: Sequence[int]) -> ArrayAttr[IntAttr]:
    return ArrayAttr([IntAttr(int(v)) for v in values])


@irdl_attr_definition
class AcceleratorAttr(ParametrizedAttribute):
    """``#accel.accelerator<"name", "json">``: an accelerator and its whole description."""

    name = "accel.accelerator"
    accelerator: StringAttr
    description: StringAttr  # canonical JSON: {"cpu": {...}?, "accelerators": [{...}]}

    def __init__(self, accelerator: str, description: str):
        super().__init__(StringAttr(accelerator), StringAttr(description))

    @property
    def content(self) -> dict:
        return json.loads(self.description.data)

    def verify(self) -> None:
        name = self.accelerator.data
        where = f"#accel.accelerator<{name!r}>"
        try:
            data = json.loads(self.description.data)
        except json.JSONDecodeError as exc:
            raise VerifyException(f"{where}: the description is not valid JSON ({exc.msg} at character "
                                  f"{exc.pos})") from None
        if not isinstance(data, dict):
            raise VerifyException(f"{where}: the description must be a JSON object")
        unknown = sorted(set(data) - {"cpu", "accelerators"})
        if unknown:
            raise VerifyException(f"{where}: unexpected key {unknown[0]!r} in the description "
                                  "(expected \"cpu\" and \"accelerators\")")
        if "cpu" in data and not isinstance(data["cpu"], dict):
            raise VerifyException(f"{where}: \"cpu\" must be the host description itself, not a file reference")
        accs = data.get("accelerators")
        if not (isinstance(accs, list) and len(accs) == 1 and isinstance(accs[0], dict)):
            raise VerifyException(f"{where}: \"accelerators\" must list exactly this accelerator")
        if accs[0].get("name") != name:
            raise VerifyException(f"{where}: the description describes accelerator {accs[0].get('name')!r}")

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_string(f"{_quoted(self.accelerator.data)}, {_quoted(self.description.data)}")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> list[Attribute]:
        with parser.in_angle_brackets():
            name = _parse_text(parser, "the accelerator's name")
            parser.parse_punctuation(",")
            text = _parse_text(parser, "the accelerator's description (JSON)")
        return [StringAttr(name), StringAttr(text)]


@irdl_attr_definition
class PlanAttr(ParametrizedAttribute):
    """``#accel.plan<flow "F", dims [..], tiles [..], cache [..], permutation [..]>`` (one entry per op loop)."""

    name = "accel.plan"
    flow: StringAttr
    dims: ArrayAttr[StringAttr]
    tiles: ArrayAttr[IntAttr]
    cache: ArrayAttr[IntAttr]
    permutation: ArrayAttr[IntAttr]

    def __init__(self, flow: str, dims: Sequence[str], tiles: Sequence[int], cache: Sequence[int],
                 permutation: Sequence[int]):
        super().__init__(StringAttr(flow), ArrayAttr([StringAttr(d) for d in dims]), _ints(tiles), _ints(cache),
                         _ints(permutation))

    @property
    def dim_names(self) -> tuple[str, ...]:
        return tuple(d.data for d in self.dims.data)

    @property
    def tile_sizes(self) -> tuple[int, ...]:
        return tuple(v.data for v in self.tiles.data)

    @property
    def cache_tiles(self) -> tuple[int, ...]:
        return tuple(v.data for v in self.cache.data)

    @property
    def order(self) -> tuple[int, ...]:
        return tuple(v.data for v in self.permutation.data)

    def verify(self) -> None:
        dims, n = self.dim_names, len(self.dims.data)
        where = f"#accel.plan<flow {self.flow.data!r}>"
        for what, values in (("tiles", self.tile_sizes), ("cache", self.cache_tiles),
                             ("permutation", self.order)):
            if len(values) != n:
                raise VerifyException(f"{where}: {what} has {len(values)} entries, dims has {n} ({', '.join(dims)})")
            if what != "permutation" and any(v < 0 for v in values):
                raise VerifyException(f"{where}: {what} must be >= 0 (0: none), got {list(values)}")
        for d in dims:
            if not _IDENT.fullmatch(d):
                raise VerifyException(f"{where}: dim name {d!r} is not an identifier")
        if len(set(dims)) != n:
            raise VerifyException(f"{where}: dims {list(dims)} name a dim twice")
        if sorted(self.order) != list(range(n)):
            raise VerifyException(f"{where}: permutation {list(self.order)} is not a permutation of 0..{n - 1}")

    def print_parameters(self, printer: Printer) -> None:
        def ints(values) -> str:
            return "[" + ", ".join(str(v) for v in values) + "]"

        with printer.in_angle_brackets():
            printer.print_string("flow ")
            printer.print_string_literal(self.flow.data)
            printer.print_string(f", dims [{', '.join(self.dim_names)}], tiles {ints(self.tile_sizes)}, "
                                 f"cache {ints(self.cache_tiles)}, permutation {ints(self.order)}")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> list[Attribute]:
        square = AttrParser.Delimiter.SQUARE

        def ints(keyword: str) -> ArrayAttr[IntAttr]:
            parser.parse_punctuation(",")
            parser.parse_keyword(keyword)
            return _ints(parser.parse_comma_separated_list(square, lambda: parser.parse_integer(allow_boolean=False)))

        with parser.in_angle_brackets():
            parser.parse_keyword("flow")
            flow = _parse_text(parser, "the flow's name")  # non-ASCII names print as hex escapes
            parser.parse_punctuation(",")
            parser.parse_keyword("dims")
            dims = parser.parse_comma_separated_list(square, lambda: parser.parse_identifier("a dim name"))
            tiles, cache, perm = ints("tiles"), ints("cache"), ints("permutation")
        return [StringAttr(flow), ArrayAttr([StringAttr(d) for d in dims]), tiles, cache, perm]


@irdl_attr_definition
class LoopAttr(ParametrizedAttribute):
    """``#accel.loop<tile "m">`` (accelerator tile loop), ``#accel.loop<cache "m">`` (CPU-cache loop) or
    ``#accel.loop<batch "b">`` (a host loop over independent problems around the nest: one DMA session)."""

    name = "accel.loop"
    role: StringAttr
    dim: StringAttr

    def __init__(self, role: str, dim: str):
        super().__init__(StringAttr(role), StringAttr(dim))

    def verify(self) -> None:
        if self.role.data not in LOOP_ROLES:
            raise VerifyException(f"#accel.loop: role must be one of {', '.join(LOOP_ROLES)}, got {self.role.data!r}")
        if not _IDENT.fullmatch(self.dim.data):
            raise VerifyException(f"#accel.loop: dim name {self.dim.data!r} is not an identifier")

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_string(self.role.data + " ")
            printer.print_string_literal(self.dim.data)

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> list[Attribute]:
        with parser.in_angle_brackets():
            role = parser.parse_keyword_in(LOOP_ROLES, "the loop's role (tile, cache or batch)")
            dim = parser.parse_str_literal("the accelerator dim of the loop")
        return [StringAttr(role), StringAttr(dim)]


# ------------------------------------------------------------------------------ ops
def _check_tile(op: Operation, value: SSAValue) -> None:
    """Tiles are memrefs of 32-bit words (i32 or f32), the unit the DMA moves."""
    ty = value.type
    if not isinstance(ty, MemRefType):
        raise VerifyException(f"{op.name}: expected a memref tile, got {ty}")
    elem = ty.element_type
    if not (isinstance(elem, Float32Type) or (isinstance(elem, IntegerType) and elem.width.data == 32)):
        raise VerifyException(f"{op.name}: tile elements must be i32 or f32 (32-bit words), got {elem}")


def _check_padded(op: Operation, tile: SSAValue, padded: DenseArrayBase | None) -> None:
    """A padded shape has one entry per tile dim: -1 (the tile's own size) or a positive size."""
    if padded is None:
        return
    values = [int(v) for v in padded.get_values()]
    rank = len(tile.type.get_shape())  # type: ignore[attr-defined]
    if len(values) != rank:
        raise VerifyException(f"{op.name}: padded shape {values} has {len(values)} entries, the tile has rank {rank}")
    if any(v == 0 or v < -1 for v in values):
        raise VerifyException(f"{op.name}: padded shape {values}: each entry must be -1 (as is) or positive")


class _OffsetOp(IRDLOperation):
    """Common shape: consumes an offset (i32), produces the next offset (i32)."""

    def _build(self, operands: list[SSAValue | Operation], properties: dict[str, Attribute] | None = None):
        super().__init__(operands=operands, result_types=[i32], properties=properties or {})


@irdl_op_definition
class InitDmaOp(IRDLOperation):
    name = "accel.init_dma"
    dma_address = operand_def(i32)
    input_address = operand_def(i32)
    input_size = operand_def(i32)
    output_address = operand_def(i32)
    output_size = operand_def(i32)
    assembly_format = "$dma_address `,` $input_address `,` $input_size `,` $output_address `,` $output_size attr-dict"

    def __init__(self, dma_address, input_address, input_size, output_address, output_size):
        super().__init__(operands=[dma_address, input_address, input_size, output_address, output_size])


@irdl_op_definition
class FreeDmaOp(IRDLOperation):
    name = "accel.free_dma"
    assembly_format = "attr-dict"

    def __init__(self):
        super().__init__()


@irdl_op_definition
class SendLiteralOp(_OffsetOp):
    name = "accel.send_literal"
    value = operand_def(i32)
    offset = operand_def(i32)
    new_offset = result_def(i32)
    assembly_format = "$value `,` $offset attr-dict"

    def __init__(self, value: SSAValue | Operation, offset: SSAValue | Operation):
        self._build([value, offset])


@irdl_op_definition
class SendOp(_OffsetOp):
    name = "accel.send"
    tile = operand_def(MemRefType)
    offset = operand_def(i32)
    new_offset = result_def(i32)
    padded_shape = opt_prop_def(DenseArrayBase[I64])
    assembly_format = "$tile `,` $offset (`padded` $padded_shape^)? attr-dict `:` type($tile)"

    def __init__(self, tile: SSAValue | Operation, offset: SSAValue | Operation,
                 padded_shape: Sequence[int] | None = None):
        props = {} if padded_shape is None else {"padded_shape": DenseArrayBase.from_list(i64, list(padded_shape))}
        self._build([tile, offset], props)

    def verify_(self) -> None:
        _check_tile(self, self.tile)
        _check_padded(self, self.tile, self.padded_shape)


@irdl_op_definition
class SendDimOp(_OffsetOp):
    name = "accel.send_dim"
    tile = operand_def(MemRefType)
    offset = operand_def(i32)
    new_offset = result_def(i32)
    dim = prop_def(IntegerAttr[I64])
    assembly_format = "$tile `[` $dim `]` `,` $offset attr-dict `:` type($tile)"

    def __init__(self, tile: SSAValue | Operation, dim: int, offset: SSAValue | Operation):
        self._build([tile, offset], {"dim": IntegerAttr(dim, i64)})

    def verify_(self) -> None:
        _check_tile(self, self.tile)
        rank = len(self.tile.type.get_shape())
        d = self.dim.value.data
        if not 0 <= d < rank:
            raise VerifyException(f"accel.send_dim: dim {d} is out of range for a rank-{rank} tile (0..{rank - 1})")


@irdl_op_definition
class SendIdxOp(_OffsetOp):
    name = "accel.send_idx"
    index = operand_def(IndexType)
    offset = operand_def(i32)
    new_offset = result_def(i32)
    assembly_format = "$index `,` $offset attr-dict"

    def __init__(self, index: SSAValue | Operation, offset: SSAValue | Operation):
        self._build([index, offset])


@irdl_op_definition
class RecvOp(_OffsetOp):
    name = "accel.recv"
    tile = operand_def(MemRefType)
    offset = operand_def(i32)
    new_offset = result_def(i32)
    mode = prop_def(StringAttr)
    padded_shape = opt_prop_def(DenseArrayBase[I64])
    assembly_format = "$tile `,` $offset $mode (`padded` $padded_shape^)? attr-dict `:` type($tile)"

    def __init__(self, tile: SSAValue | Operation, offset: SSAValue | Operation, mode: str = "accumulate",
                 padded_shape: Sequence[int] | None = None):
        props: dict[str, Attribute] = {"mode": StringAttr(mode)}
        if padded_shape is not None:
            props["padded_shape"] = DenseArrayBase.from_list(i64, list(padded_shape))
        self._build([tile, offset], props)

    def verify_(self) -> None:
        _check_tile(self, self.tile)
        if self.mode.data not in RECV_MODES:
            raise VerifyException(f"accel.recv: mode must be one of {', '.join(RECV_MODES)}, got {self.mode.data!r}")
        _check_padded(self, self.tile, self.padded_shape)


@irdl_op_definition
class FlushSendOp(IRDLOperation):
    """Send the ``length`` staged words as one DMA transaction and wait; yields offset 0."""

    name = "accel.flush_send"
    length = operand_def(i32)
    new_offset = result_def(i32)
    assembly_format = "$length attr-dict"

    def __init__(self, length: SSAValue | Operation):
        super().__init__(operands=[length], result_types=[i32])


@irdl_op_definition
class StartSendOp(IRDLOperation):
    name = "accel.start_send"
    length = operand_def(i32)
    assembly_format = "$length attr-dict"

    def __init__(self, length: SSAValue | Operation):
        super().__init__(operands=[length])


@irdl_op_definition
class WaitSendOp(IRDLOperation):
    name = "accel.wait_send"
    assembly_format = "attr-dict"

    def __init__(self):
        super().__init__()


@irdl_op_definition
class StartRecvOp(IRDLOperation):
    name = "accel.start_recv"
    length = operand_def(i32)
    assembly_format = "$length attr-dict"

    def __init__(self, length: SSAValue | Operation):
        super().__init__(operands=[length])


@irdl_op_definition
class WaitRecvOp(IRDLOperation):
    name = "accel.wait_recv"
    assembly_format = "attr-dict"

    def __init__(self):
        super().__init__()


Accel = Dialect(
    "accel",
    [
        InitDmaOp,
        FreeDmaOp,
        SendLiteralOp,
        SendOp,
        SendDimOp,
        SendIdxOp,
        RecvOp,
        FlushSendOp,
        StartSendOp,
        WaitSendOp,
        StartRecvOp,
        WaitRecvOp,
    ],
    [AcceleratorAttr, PlanAttr, LoopAttr],
)
