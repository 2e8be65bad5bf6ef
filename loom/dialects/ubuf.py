"""The ``ubuf`` dialect: a scheduled streaming accelerator's unified buffers as IR (thesis §4.2).

One ``ubuf.design`` holds what the scheduler computed for one accelerator
invocation (``loom.streaming.Design``): its memories and its compute kernels.

=================  =================================================================
op                 meaning
=================  =================================================================
``ubuf.design``    @name, latency (cycles), pixels_per_cycle, size (output extents);
                   a symbol table holding the ops below
``ubuf.buffer``    @name : element type, extents (stored index space), capacity (live
                   values, >= 0), kind (``stream`` host input, ``buffer``, ``wire`` =
                   capacity 0), usage / pattern / memory (thesis Table 4.3 class), an
                   optional ``store_in`` hint; holds its ``ubuf.port`` ops
``ubuf.port``      direction ``in`` (write) or ``out`` (read), port name, the stage on
                   the other side (a kernel or ``host``), domain (isl set), access
                   (isl map to the buffer index), schedule (isl map to the cycle), count
                   (operations = points of the domain)
``ubuf.kernel``    a compute stage: inputs / outputs by buffer symbol, start offset
                   (cycle of its first firing) and latency; ``reads`` names the read
                   port behind each value argument (``buffer/port``); region ``init``
                   computes a point's value (block arguments: the point's global
                   coordinates as i32, then one value per read port) with arith/math
                   ops ending in ``ubuf.yield``; region ``update`` (empty unless the
                   stage iterates a reduction in time) computes one iteration
                   (arguments: coordinates, reduction loop counters, the partial sum,
                   then the port values)
``ubuf.lookup``    inside a kernel: the entry of a ``ubuf.constant`` table at i32 indices
``ubuf.yield``     ends a kernel region with the value it computes
``ubuf.share``     @name : a hardware kernel time-multiplexed by several stages (compute
                   sharing, thesis §5): the stages in slot order, the interleaving
                   (``pixel``/``line``/``block``), the period of the coarse loop (cycles;
                   0 for one block), and each stage's slot (start within the period,
                   length); every stage's firings must fall in its own slot, and no two
                   stages fire in one cycle (a later stage's slot may lie inside the first
                   stage's, in cycles it leaves idle: gap filling), so the kernel's inputs
                   are multiplexed without conflicts
``ubuf.constant``  @name : a constant table kept in the accelerator (tap registers,
                   tap memory, ROM): entries and depth (ROM depth rounded up to 4);
                   optionally its contents (``mins``, ``extents``, ``values``) for lookups
=================  =================================================================

The isl strings are what ``islpy`` parses (the verifiers parse them); the
schedule is written as the thesis' Table 4.1 writes it (``130 + 64y + x``).
``design_to_ir(design)`` builds the module; ``parse_ir(text)`` reads the
printed text back. In generic form (``loom.oracle.mlir.verify(module,
allow_unregistered=True)``) upstream ``mlir-opt`` accepts it.
"""

from __future__ import annotations

import re
import struct

import islpy as isl
from xdsl.dialects.builtin import (
    I64,
    ArrayAttr,
    BFloat16Type,
    DenseArrayBase,
    Float32Type,
    FlatSymbolRefAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    Signedness,
    StringAttr,
    SymbolNameConstraint,
    i64,
)
from xdsl.ir import Block, Dialect, Operation, Region, TypeAttribute
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.parser import Parser
from xdsl.traits import HasParent, IsTerminator, NoTerminator, SymbolOpInterface, SymbolTable
from xdsl.utils.exceptions import DiagnosticException, ParseError, VerifyException

from loom.dialects.parsing import use_linear_lexer
from loom.errors import LoomError

PORT_DIRECTIONS = ("in", "out")
BUFFER_KINDS = ("stream", "buffer", "wire", "accumulation")


def _int(value: int) -> IntegerAttr:
    return IntegerAttr(int(value), i64)


def _isl(op: Operation, what: str, text: str, parse):
    try:
        return parse(text)
    except isl.Error as e:
        raise VerifyException(f"{op.name}: {what} {text!r} is not valid isl syntax ({e})") from None


@irdl_op_definition
class DesignOp(IRDLOperation):
    name = "ubuf.design"
    sym_name = prop_def(SymbolNameConstraint())
    latency = prop_def(IntegerAttr[I64])
    pixels_per_cycle = prop_def(IntegerAttr[I64])
    size = prop_def(DenseArrayBase[I64])
    body = region_def("single_block")
    traits = traits_def(NoTerminator(), SymbolOpInterface(), SymbolTable())
    assembly_format = ("$sym_name `latency` $latency `pixels_per_cycle` $pixels_per_cycle `size` $size "
                       "attr-dict-with-keyword $body")

    def __init__(self, name: str, latency: int, pixels_per_cycle: int, size, ops: list[Operation]):
        super().__init__(properties={"sym_name": StringAttr(name), "latency": _int(latency),
                                     "pixels_per_cycle": _int(pixels_per_cycle),
                                     "size": DenseArrayBase.from_list(i64, list(size))},
                         regions=[Region(Block(ops))])

    def buffers(self) -> dict[str, "BufferOp"]:
        # every block: the verifier of a kernel can run before this op's own single-block check
        return {op.sym_name.data: op for block in self.body.blocks for op in block.ops if isinstance(op, BufferOp)}

    def verify_(self) -> None:
        where = f"ubuf.design @{self.sym_name.data}"
        if self.latency.value.data < 0:
            raise VerifyException(f"{where}: latency must be >= 0")
        if self.pixels_per_cycle.value.data < 1:
            raise VerifyException(f"{where}: pixels_per_cycle must be >= 1")
        seen = set()  # one buffer, constant or share per symbol, one kernel per stage
        for op in self.body.ops:
            key = (("ubuf.kernel", op.stage.data) if isinstance(op, KernelOp)
                   else ("symbol", op.sym_name.data) if hasattr(op, "sym_name") else None)
            if key in seen:
                what = f"ubuf.kernel {key[1]!r}" if key[0] == "ubuf.kernel" else f"symbol @{key[1]}"
                raise VerifyException(f"{where}: {what} is defined twice")
            seen.add(key)


@irdl_op_definition
class BufferOp(IRDLOperation):
    name = "ubuf.buffer"
    sym_name = prop_def(SymbolNameConstraint())
    element_type = prop_def(TypeAttribute)
    extents = prop_def(DenseArrayBase[I64])
    capacity = prop_def(IntegerAttr[I64])
    kind = prop_def(StringAttr)
    usage = prop_def(StringAttr)
    pattern = prop_def(StringAttr)
    memory = prop_def(StringAttr)
    store_in = opt_prop_def(StringAttr)
    body = region_def("single_block")
    traits = traits_def(NoTerminator(), SymbolOpInterface(), HasParent(DesignOp))
    assembly_format = ("$sym_name `:` $element_type `extents` $extents `capacity` $capacity `kind` $kind "
                       "`usage` $usage `pattern` $pattern `memory` $memory (`store_in` $store_in^)? "
                       "attr-dict-with-keyword $body")

    def __init__(self, name: str, element_type, extents, capacity: int, kind: str, usage: str, pattern: str,
                 memory: str, ports: list[Operation], store_in: str | None = None):
        props = {"sym_name": StringAttr(name), "element_type": element_type,
                 "extents": DenseArrayBase.from_list(i64, list(extents)), "capacity": _int(capacity),
                 "kind": StringAttr(kind), "usage": StringAttr(usage), "pattern": StringAttr(pattern),
                 "memory": StringAttr(memory)}
        if store_in:
            props["store_in"] = StringAttr(store_in)
        super().__init__(properties=props, regions=[Region(Block(ports))])

    @property
    def rank(self) -> int:
        return len(self.extents.get_values())

    def ports(self) -> list["PortOp"]:
        return [op for op in self.body.ops if isinstance(op, PortOp)]

    def verify_(self) -> None:
        where = f"ubuf.buffer @{self.sym_name.data}"
        if self.capacity.value.data < 0:
            raise VerifyException(f"{where}: capacity must be >= 0, got {self.capacity.value.data}")
        if any(e < 1 for e in self.extents.get_values()):
            raise VerifyException(f"{where}: extents must be positive, got {list(self.extents.get_values())}")
        if self.kind.data not in BUFFER_KINDS:
            raise VerifyException(f"{where}: kind must be one of {', '.join(BUFFER_KINDS)}, got {self.kind.data!r}")
        if self.kind.data == "wire" and self.capacity.value.data != 0:
            raise VerifyException(f"{where}: a wire holds no values, but capacity is {self.capacity.value.data}")
        writes = [p for p in self.ports() if p.direction.data == "in"]
        if len(writes) != 1:
            raise VerifyException(f"{where}: expected exactly one write port (direction \"in\"), got {len(writes)}")
        names = [p.port.data for p in self.ports()]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise VerifyException(f"{where}: port {twice[0]!r} is defined twice")


@irdl_op_definition
class PortOp(IRDLOperation):
    name = "ubuf.port"
    direction = prop_def(StringAttr)
    port = prop_def(StringAttr)
    stage = prop_def(StringAttr)
    domain = prop_def(StringAttr)
    access = prop_def(StringAttr)
    schedule = prop_def(StringAttr)
    count = prop_def(IntegerAttr[I64])
    traits = traits_def(HasParent(BufferOp))
    assembly_format = ("$direction $port `stage` $stage `domain` $domain `access` $access `schedule` $schedule "
                       "`count` $count attr-dict")

    def __init__(self, direction: str, port: str, stage: str, domain: str, access: str, schedule: str,
                 count: int):
        super().__init__(properties={"direction": StringAttr(direction), "port": StringAttr(port),
                                     "stage": StringAttr(stage), "domain": StringAttr(domain),
                                     "access": StringAttr(access), "schedule": StringAttr(schedule),
                                     "count": _int(count)})

    def verify_(self) -> None:
        where = f"ubuf.port {self.port.data!r}"
        if self.direction.data not in PORT_DIRECTIONS:
            raise VerifyException(f"{where}: direction must be \"in\" or \"out\", got {self.direction.data!r}")
        if self.count.value.data < 0:
            raise VerifyException(f"{where}: count must be >= 0, got {self.count.value.data}")
        domain = _isl(self, "domain", self.domain.data, isl.Set)
        access = _isl(self, "access", self.access.data, isl.Map)
        schedule = _isl(self, "schedule", self.schedule.data, isl.Map)
        n = domain.dim(isl.dim_type.set)
        for what, m in (("access", access), ("schedule", schedule)):
            if m.dim(isl.dim_type.in_) != n:
                raise VerifyException(f"{where}: the {what} map takes {m.dim(isl.dim_type.in_)} loop dimensions "
                                      f"but the domain has {n}")
            if m.get_tuple_name(isl.dim_type.in_) != domain.get_tuple_name():
                raise VerifyException(f"{where}: the {what} map's loops are {m.get_tuple_name(isl.dim_type.in_)!r} "
                                      f"but the domain's {domain.get_tuple_name()!r}")
        if schedule.dim(isl.dim_type.out) != 1:
            raise VerifyException(f"{where}: the schedule must map to one cycle, got "
                                  f"{schedule.dim(isl.dim_type.out)} output dimensions")
        parent = self.parent_op()
        if isinstance(parent, BufferOp) and access.dim(isl.dim_type.out) != parent.rank:
            raise VerifyException(f"{where}: the access map gives {access.dim(isl.dim_type.out)} indices but "
                                  f"buffer @{parent.sym_name.data} has {parent.rank} dimensions")
        if not domain.is_empty() and not schedule.domain().intersect(domain).is_equal(domain):
            raise VerifyException(f"{where}: the schedule does not cover the domain")


def _symbols(op: Operation, attr: ArrayAttr, what: str) -> None:
    design = op.parent_op()
    if not isinstance(design, DesignOp):
        return
    known = design.buffers()
    for ref in attr.data:
        name = ref.root_reference.data
        if name not in known:
            raise VerifyException(f"{op.name} {op.stage.data!r}: {what} @{name} is not a ubuf.buffer of "
                                  f"design @{design.sym_name.data} (known: {', '.join(sorted(known))})")


@irdl_op_definition
class KernelOp(IRDLOperation):
    name = "ubuf.kernel"
    stage = prop_def(StringAttr)
    inputs = prop_def(ArrayAttr[FlatSymbolRefAttr])
    outputs = prop_def(ArrayAttr[FlatSymbolRefAttr])
    offset = prop_def(IntegerAttr[I64])
    latency = prop_def(IntegerAttr[I64])
    reads = prop_def(ArrayAttr[StringAttr])
    init = region_def()
    update = region_def()
    traits = traits_def(HasParent(DesignOp))
    assembly_format = ("$stage `inputs` $inputs `outputs` $outputs `offset` $offset `latency` $latency "
                       "`reads` $reads attr-dict-with-keyword $init $update")

    def __init__(self, stage: str, inputs: list[str], outputs: list[str], offset: int, latency: int = 0,
                 reads: list[str] = (), init: Region | None = None, update: Region | None = None):
        super().__init__(properties={"stage": StringAttr(stage),
                                     "inputs": ArrayAttr([FlatSymbolRefAttr(n) for n in inputs]),
                                     "outputs": ArrayAttr([FlatSymbolRefAttr(n) for n in outputs]),
                                     "offset": _int(offset), "latency": _int(latency),
                                     "reads": ArrayAttr([StringAttr(r) for r in reads])},
                         regions=[init or Region(), update or Region()])

    def read_ports(self) -> list[tuple[str, str]]:
        """(buffer, port) behind each value argument of the kernel regions."""
        return [tuple(r.data.split("/", 1)) for r in self.reads.data]

    def verify_(self) -> None:
        where = f"ubuf.kernel {self.stage.data!r}"
        for what in ("offset", "latency"):
            if getattr(self, what).value.data < 0:
                raise VerifyException(f"{where}: {what} must be >= 0")
        _symbols(self, self.inputs, "input")
        _symbols(self, self.outputs, "output")
        n = len(self.reads.data)
        design = self.parent_op()
        buffers = design.buffers() if isinstance(design, DesignOp) else {}
        for r in self.reads.data:
            if "/" not in r.data:
                raise VerifyException(f"{where}: read {r.data!r} is not 'buffer/port'")
            buffer, port = r.data.split("/", 1)
            ports = {p.port.data: p for p in buffers[buffer].ports()} if buffer in buffers else {}
            if buffers and (port not in ports or ports[port].direction.data != "out"
                            or ports[port].stage.data != self.stage.data):
                raise VerifyException(f"{where}: read {r.data!r} is not a read port of stage {self.stage.data!r} "
                                      "(a kernel reads through its own ports)")
        for name, region in (("init", self.init), ("update", self.update)):
            if not region.blocks:
                if name == "init" and n:
                    raise VerifyException(f"{where}: reads {n} ports but has no init region")
                continue
            if len(region.blocks) > 1:
                raise VerifyException(f"{where}: the {name} region has {len(region.blocks)} blocks; a kernel is "
                                      "one block of straight-line ops")
            block = region.block
            if len(block.args) < n:
                raise VerifyException(f"{where}: the {name} region takes {len(block.args)} arguments, fewer than "
                                      f"its {n} read ports")
            if not isinstance(block.last_op, YieldOp):
                raise VerifyException(f"{where}: the {name} region must end with ubuf.yield")
            _check_straight_line(block, f"{where}, {name} region")


def _check_straight_line(block: Block, where: str) -> None:
    """Every value is defined before it is used (the block's arguments or an earlier op), every op but the
    yield gives one value, and no op holds a region: the kernel evaluator walks the ops once, in order."""
    defined = set(block.args)
    for k, op in enumerate(block.ops):
        for i, v in enumerate(op.operands):
            if v not in defined:
                raise VerifyException(f"{where}: op {k} ({op.name}) uses operand {i} before it is defined")
        if op.regions:
            raise VerifyException(f"{where}: op {k} ({op.name}) holds a region; a kernel is straight-line code")
        if not isinstance(op, YieldOp) and len(op.results) != 1:
            raise VerifyException(f"{where}: op {k} ({op.name}) gives {len(op.results)} values; kernel ops give "
                                  "one")
        defined.update(op.results)


@irdl_op_definition
class YieldOp(IRDLOperation):
    """The value a kernel region computes."""

    name = "ubuf.yield"
    value = operand_def()
    traits = traits_def(IsTerminator())
    assembly_format = "$value attr-dict `:` type($value)"

    def __init__(self, value):
        super().__init__(operands=[value])


@irdl_op_definition
class LookupOp(IRDLOperation):
    """``@table[indices]``: an entry of a ``ubuf.constant`` (ROM / tap memory) read inside a kernel."""

    name = "ubuf.lookup"
    table = prop_def(FlatSymbolRefAttr)
    indices = var_operand_def()
    result = result_def()
    assembly_format = "$table `[` $indices `]` attr-dict `:` functional-type($indices, $result)"

    def __init__(self, table: str, indices, result_type):
        super().__init__(operands=[list(indices)], properties={"table": FlatSymbolRefAttr(table)},
                         result_types=[result_type])

    def verify_(self) -> None:
        name = self.table.root_reference.data
        where = f"ubuf.lookup @{name}"
        design = self.parent_op()
        while design is not None and not isinstance(design, DesignOp):
            design = design.parent_op()
        if design is None:  # not placed in a design yet: nothing to resolve the table against
            return
        table = next((op for block in design.body.blocks for op in block.ops
                      if isinstance(op, ConstantOp) and op.sym_name.data == name), None)
        if table is None:
            raise VerifyException(f"{where}: the design has no ubuf.constant @{name}")
        want = _entry_value_type(table.element_type)
        if self.result.type != want:
            raise VerifyException(f"{where}: gives {self.result.type}, but the entries of @{name} are "
                                  f"{table.element_type}: a lookup gives {want}")
        if table.extents is not None and len(self.indices) != len(table.extents.get_values()):
            raise VerifyException(f"{where}: {len(self.indices)} indices for a table of "
                                  f"{len(table.extents.get_values())} dimensions")
        for i, v in enumerate(self.indices):
            if not isinstance(v.type, (IntegerType, IndexType)):
                raise VerifyException(f"{where}: index {i} is {v.type}, not an integer")


def _entry_value_type(element_type):
    """The type of the SSA value a table entry is in a kernel: integers signless (ui8 -> i8), floats as they are."""
    if isinstance(element_type, IntegerType):
        return IntegerType(element_type.width.data)
    return element_type


def _entry_range(element_type) -> tuple[int, int] | None:
    """[lo, hi) of the int64 a table holds per entry: the integer's values, a float's bit pattern (f32 and bf16
    entries are stored as f32 bits); None when any int64 fits."""
    if isinstance(element_type, IntegerType):
        return element_type.value_range()
    if isinstance(element_type, (Float32Type, BFloat16Type)):
        return Signedness.SIGNLESS.value_range(32)
    return None


@irdl_op_definition
class ConstantOp(IRDLOperation):
    name = "ubuf.constant"
    sym_name = prop_def(SymbolNameConstraint())
    element_type = prop_def(TypeAttribute)
    kind = prop_def(StringAttr)
    pattern = prop_def(StringAttr)
    entries = prop_def(IntegerAttr[I64])
    depth = prop_def(IntegerAttr[I64])
    mins = opt_prop_def(DenseArrayBase[I64])
    extents = opt_prop_def(DenseArrayBase[I64])
    values = opt_prop_def(DenseArrayBase[I64])  # row-major over reversed extents (numpy layout), as int64
    traits = traits_def(SymbolOpInterface(), HasParent(DesignOp))
    assembly_format = ("$sym_name `:` $element_type `kind` $kind `pattern` $pattern `entries` $entries "
                       "`depth` $depth (`mins` $mins^)? (`extents` $extents^)? (`values` $values^)? attr-dict")

    def __init__(self, name: str, element_type, kind: str, pattern: str, entries: int, depth: int,
                 mins=None, extents=None, values=None):
        props = {"sym_name": StringAttr(name), "element_type": element_type,
                 "kind": StringAttr(kind), "pattern": StringAttr(pattern),
                 "entries": _int(entries), "depth": _int(depth)}
        if values is not None:
            props["mins"] = DenseArrayBase.from_list(i64, [int(m) for m in mins])
            props["extents"] = DenseArrayBase.from_list(i64, [int(e) for e in extents])
            props["values"] = DenseArrayBase.from_list(i64, [int(v) for v in values])
        super().__init__(properties=props)

    def verify_(self) -> None:
        where = f"ubuf.constant @{self.sym_name.data}"
        if not 0 < self.entries.value.data <= self.depth.value.data:
            raise VerifyException(f"{where}: need 0 < entries <= depth, got "
                                  f"{self.entries.value.data} / {self.depth.value.data}")
        given = [self.mins is not None, self.extents is not None, self.values is not None]
        if any(given) and not all(given):
            raise VerifyException(f"{where}: contents need mins, extents and values together")
        if all(given):
            n = 1
            for e in self.extents.get_values():
                n *= e
            if len(self.mins.get_values()) != len(self.extents.get_values()) or n != len(self.values.get_values()):
                raise VerifyException(f"{where}: {len(self.values.get_values())} values do not fill extents "
                                      f"{list(self.extents.get_values())}")
            self._verify_entries(where)

    def _verify_entries(self, where: str) -> None:
        """Every value fits the element type (numpy would wrap 300 in a ui8 table to 44)."""
        bounds = _entry_range(self.element_type)
        if bounds is None:
            return
        lo, hi = bounds
        for k, v in enumerate(self.values.get_values()):
            if not lo <= v < hi:
                raise VerifyException(f"{where}: value {v} (entry {k}) does not fit the element type "
                                      f"{self.element_type} ({lo} to {hi - 1})")


INTERLEAVINGS = ("pixel", "line", "block")


@irdl_op_definition
class ShareOp(IRDLOperation):
    name = "ubuf.share"
    sym_name = prop_def(SymbolNameConstraint())
    stages = prop_def(ArrayAttr[StringAttr])
    interleave = prop_def(StringAttr)
    period = prop_def(IntegerAttr[I64])
    slot_starts = prop_def(DenseArrayBase[I64])
    slot_lengths = prop_def(DenseArrayBase[I64])
    traits = traits_def(HasParent(DesignOp), SymbolOpInterface())
    assembly_format = ("$sym_name `stages` $stages `interleave` $interleave `period` $period "
                       "`slots` $slot_starts $slot_lengths attr-dict")

    def __init__(self, name: str, stages: list[str], interleave: str, period: int, starts, lengths):
        super().__init__(properties={"sym_name": StringAttr(name),
                                     "stages": ArrayAttr([StringAttr(s) for s in stages]),
                                     "interleave": StringAttr(interleave), "period": _int(period),
                                     "slot_starts": DenseArrayBase.from_list(i64, [int(v) for v in starts]),
                                     "slot_lengths": DenseArrayBase.from_list(i64, [int(v) for v in lengths])})

    def slots(self) -> dict:
        """stage -> [(start, length), ...] within the period (a stage named k times has k slots)."""
        runs: dict = {}
        for st, a, n in zip(self.stages.data, self.slot_starts.get_values(), self.slot_lengths.get_values()):
            runs.setdefault(st.data, []).append((a, n))
        return runs

    def verify_(self) -> None:
        where = f"ubuf.share @{self.sym_name.data}"
        n = len(self.stages.data)
        distinct = len({st.data for st in self.stages.data})
        if distinct < 2:
            raise VerifyException(f"{where}: a shared kernel needs at least 2 stages, got {distinct}")
        if self.interleave.data not in INTERLEAVINGS:
            raise VerifyException(f"{where}: interleave must be one of {', '.join(INTERLEAVINGS)}, "
                                  f"got {self.interleave.data!r}")
        starts, lengths = self.slot_starts.get_values(), self.slot_lengths.get_values()
        if len(starts) != n or len(lengths) != n:
            raise VerifyException(f"{where}: {n} stage slots need {n} slot starts and lengths")
        if self.period.value.data < 0 or any(v < 0 for v in starts) or any(v <= 0 for v in lengths):
            raise VerifyException(f"{where}: period and slot starts must be >= 0 and slot lengths > 0")
        if self.period.value.data and any(a + k > self.period.value.data for a, k in zip(starts, lengths)):
            raise VerifyException(f"{where}: a slot ends after the {self.period.value.data}-cycle period")


Ubuf = Dialect("ubuf", [DesignOp, BufferOp, PortOp, KernelOp, YieldOp, LookupOp, ConstantOp, ShareOp], [])


IR_NAME = "<ubuf IR>"  # the file name errors give the text (a LoomError renders it as <ubuf IR>:line:col)


_UNCLOSED_STRING = "End of file reached before closing string literal"  # xDSL's words for it, at any line end


class _LocatingParser(Parser):
    """xDSL's parser, remembering where each op starts (ops keep no location, and a verifier names none)."""

    def __init__(self, ctx, text: str, name: str):
        super().__init__(ctx, "", name)
        use_linear_lexer(self, text, name)
        self.starts: dict[int, int] = {}  # id(op) -> offset in the text
        self.op_names: list[str] = []  # the ops being parsed, innermost last
        self.text = text

    def parse_operation(self) -> Operation:
        start = self.pos
        self.op_names.append(_op_name_at(self.text, start))
        try:
            op = super().parse_operation()
        finally:
            self.op_names.pop()
        self.starts[id(op)] = start
        return op

    def parse_optional_integer(self, allow_boolean: bool = True, allow_negative: bool = True) -> int | None:
        """xDSL reads an i64 written between 2^63 and 2^64 as its two's complement (18446744073709551615 as
        -1), so a verifier would blame a value nobody wrote: a ubuf op's integer beyond i64 is refused here."""
        start = self.pos
        value = super().parse_optional_integer(allow_boolean, allow_negative)
        if value is not None and value > _I64_MAX and self.op_names and self.op_names[-1].startswith("ubuf."):
            self.raise_error(f"{value} is out of range: {self.op_names[-1]}'s integers are signed 64-bit, at most "
                             f"{_I64_MAX}", start, self.pos)
        return value


_I64_MAX = 2**63 - 1


def _op_name_at(text: str, offset: int) -> str:
    """The name of the op whose text starts at ``offset`` (custom or generic form, after its results)."""
    match = re.compile(r'\s*(?:%[^=\n"@]*=\s*)?"?([\w.]+)').match(text, offset)
    return match.group(1) if match else ""


def _line_col(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


def _source_line(text: str, line: int) -> str:
    lines = text.splitlines()
    return lines[line - 1].strip() if 0 < line <= len(lines) else ""


def _after_last_token(text: str, offset: int) -> int:
    """``offset``, or the end of the previous line's last token when ``offset`` starts a line: the parser has
    read one token ahead, so what it refuses at a line's first token (the last array of an op) is on the line
    before."""
    before = text[:offset]
    start = before.rfind("\n") + 1
    if start and not before[start:].strip():
        return len(before.rstrip())
    return offset


def _parse_error(text: str, error: ParseError) -> LoomError:
    """The parse error at its line and column of ``text``, with that line quoted."""
    message, offset = error.msg, error.span.start
    undefined = re.match(r"values used but not defined: \[(.*)\]", message)
    if undefined:  # xDSL reports these at the end of the module: point at the first use instead
        names = [n.strip() for n in undefined.group(1).split(",")]
        uses = [m.start() for n in names
                for m in [re.search(rf"(?<![\w$.%-]){re.escape(n)}(?![\w$.-])", text)] if m]
        offset = min(uses, default=offset)
        message = (f"value{'s' * (len(names) > 1)} {', '.join(names)} {'are' if len(names) > 1 else 'is'} used "
                   "but not defined (an op's operands must be results of ops above it or block arguments)")
    elif message.startswith(_UNCLOSED_STRING):
        message = ("this string is not closed on its line (a string ends with \" on the line it starts; its "
                   "escapes are \\\" \\\\ \\n \\t or two hex digits)")
    line, column = _line_col(text, offset)
    quoted = _source_line(text, line)
    return LoomError(f"{message}" + (f" (in `{quoted}`)" if quoted else ""), filename=IR_NAME, line=line,
                     column=column)


def _verify_error(text: str, module: ModuleOp, starts: dict, error: Exception) -> LoomError:
    """The verification error at the line of the op that fails (the innermost: nested ops verify first)."""
    culprit = None
    for op in module.walk(region_first=True):
        try:
            op.verify(verify_nested_ops=False)
        except Exception:  # noqa: BLE001 - the op that raised is what we look for
            culprit = op
            break
    message = str(error.args[0] if error.args else error).strip()
    line = column = None
    if culprit is not None:
        if not message.startswith(culprit.name):
            message = f"{culprit.name}: {message}"
        if id(culprit) in starts:
            line, column = _line_col(text, starts[id(culprit)])
    return LoomError(message, filename=IR_NAME, line=line, column=column,
                     construct=culprit.name if culprit is not None else None)


def parse_ir(text: str) -> ModuleOp:
    """Parse printed ``ubuf`` IR (custom or generic form) back into a verified module.

    Text that does not parse or verify (e.g. hand-edited IR) is a ``LoomError`` at its line and column of
    ``text`` (``<ubuf IR>:line:col``) saying what was expected; a verification error names the op."""
    from loom.dialects import context

    if not text.strip():  # xDSL says "Could not parse entire input!", which hides that there was nothing
        raise LoomError("the text is empty: expected printed ubuf IR, a module holding one ubuf.design",
                        filename=IR_NAME)
    try:
        parser = _LocatingParser(context(), text, IR_NAME)  # lexes the first token
    except ParseError as e:
        raise _parse_error(text, e) from None
    try:
        module = parser.parse_module()
    except ParseError as e:
        raise _parse_error(text, e) from None
    except (OverflowError, struct.error, VerifyException, DiagnosticException) as e:
        # an attribute refused while it is built (an integer beyond int64 in a dense array fails to pack, one
        # out of its type's range does not verify): at the token the parser stopped on
        line, column = _line_col(text, _after_last_token(text, parser.pos))
        message = str(e.args[0] if e.args else e).strip()
        if isinstance(e, (OverflowError, struct.error)):
            message = f"a value does not fit in 64 bits ({message})"
        raise LoomError(f"{message} (in `{_source_line(text, line)}`)", filename=IR_NAME, line=line,
                        column=column) from None
    try:
        module.verify()
    except (VerifyException, DiagnosticException) as e:
        raise _verify_error(text, module, parser.starts, e) from None
    return module


__all__ = ["Ubuf", "DesignOp", "BufferOp", "PortOp", "KernelOp", "YieldOp", "LookupOp", "ConstantOp", "ShareOp",
           "INTERLEAVINGS", "parse_ir"]
