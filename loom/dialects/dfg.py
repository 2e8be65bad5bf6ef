"""The ``dfg`` dialect: Kahn-process-network dataflow graphs (EVEREST D4.5 §4.3, after dfg-mlir).

A graph is nodes (``dfg.operator`` defines one, ``dfg.instantiate`` places it) joined
by bounded FIFO channels (``dfg.channel``). A channel has two ends:

- ``!dfg.input<T>``: the end a node *pulls* from (the node's input),
- ``!dfg.output<T>``: the end a node *pushes* into (the node's output).

``%x_in, %x_out = dfg.channel(4) : T`` makes both ends of a channel of depth 4 (the
seed's Listing 1 spelling: the producer gets ``%x_out``, the consumer ``%x_in``).

=========================  =========================================================
op                         meaning
=========================  =========================================================
``dfg.operator @f``        ``inputs(%a: T, ...) outputs(%b: U, ...) [attributes {..}]
                           [{ body }]``: a node's behaviour. The block arguments are
                           the channel ends (inputs first). Without a body the node is
                           external: its implementation is bound at run time (a Python
                           function, a ``@loom.kernel``, an accelerator when offloaded)
``dfg.instantiate``        ``[offloaded] @f inputs(%ends..) outputs(%ends..)``: one
                           node of the graph; ``offloaded`` puts it on an accelerator
``dfg.channel``            ``(depth) : T`` -> (input end, output end); depth >= 1,
                           default 1
``dfg.push``               ``(%value) %out_end : T`` blocks while the channel is full
``dfg.pull``               ``%in_end : T`` -> value; blocks while it is empty
``dfg.loop``               ``inputs(%a: T) outputs(%b: U) { body }`` inside an
                           operator: repeat the body until one channel of the operator
                           is broken (its other end closed), then the operator ends
=========================  =========================================================

Verifiers: pushes go to output ends and pulls read input ends with matching element
types (so a node cannot read its own output except through a channel); every channel
end has exactly one holder (one ``dfg.instantiate``, or the enclosing function's own
pushes/pulls); instantiations match their operator's signature.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import (
    I64,
    FlatSymbolRefAttr,
    IntegerAttr,
    StringAttr,
    SymbolNameConstraint,
    UnitAttr,
    i64,
)
from xdsl.ir import Attribute, Block, Dialect, Operation, ParametrizedAttribute, Region, SSAValue, TypeAttribute
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    irdl_attr_definition,
    irdl_op_definition,
    opt_prop_def,
    param_def,
    prop_def,
    region_def,
    result_def,
    operand_def,
    traits_def,
    var_operand_def,
)
from xdsl.parser import AttrParser, Parser
from xdsl.printer import Printer
from xdsl.traits import IsolatedFromAbove, NoTerminator, SymbolOpInterface
from xdsl.utils.exceptions import VerifyException


class _ChannelEndType:
    """Shared syntax of both channel ends: ``!dfg.input<T>`` / ``!dfg.output<T>``."""

    element_type: Attribute

    def __init__(self, element_type: Attribute):
        super().__init__(element_type)  # type: ignore[call-arg]

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            return (parser.parse_type(),)

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_attribute(self.element_type)


@irdl_attr_definition
class InputType(_ChannelEndType, ParametrizedAttribute, TypeAttribute):
    """The end of a channel a node pulls from."""

    name = "dfg.input"
    element_type: Attribute = param_def()


@irdl_attr_definition
class OutputType(_ChannelEndType, ParametrizedAttribute, TypeAttribute):
    """The end of a channel a node pushes into."""

    name = "dfg.output"
    element_type: Attribute = param_def()


def _operand(parser: Parser) -> SSAValue:
    """An already defined operand whose type the syntax does not repeat (channel ends, pushed values)."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # xDSL wants the type up front; ours is implied
        return parser.parse_operand()


def _value_name(value: SSAValue) -> str:
    return f"%{value.name_hint}" if value.name_hint else "a value"


# ------------------------------------------------------------------ shared syntax helpers
def _parse_typed_args(parser: Parser, keyword: str, wrap) -> list[Parser.Argument]:
    """``keyword(%a: T, ...)`` as block arguments of type ``wrap(T)``; absent keyword -> []."""
    if parser.parse_optional_keyword(keyword) is None:
        return []
    args = parser.parse_comma_separated_list(Parser.Delimiter.PAREN, lambda: parser.parse_argument(expect_type=True))
    return [Parser.Argument(a.name, wrap(a.type)) for a in args]


def _parse_typed_operands(parser: Parser, keyword: str) -> list[SSAValue]:
    """``keyword(%a: T, ...)`` naming existing channel ends; T is their element type."""
    if parser.parse_optional_keyword(keyword) is None:
        return []

    def one() -> SSAValue:
        pos = parser.pos
        value = _operand(parser)
        parser.parse_punctuation(":")
        elem = parser.parse_type()
        if not isinstance(value.type, InputType | OutputType) or value.type.element_type != elem:
            parser.raise_error(f"expected a channel end of element type {elem}, got {value.type}", pos, parser.pos)
        return value

    return parser.parse_comma_separated_list(Parser.Delimiter.PAREN, one)


def _parse_operands(parser: Parser, keyword: str) -> list[SSAValue]:
    if parser.parse_optional_keyword(keyword) is None:
        return []
    return parser.parse_comma_separated_list(Parser.Delimiter.PAREN, lambda: _operand(parser))


def _print_typed(printer: Printer, keyword: str, values: Sequence[SSAValue], as_args: bool) -> None:
    if not values:
        return
    printer.print_string(f" {keyword}(")
    for n, v in enumerate(values):
        if n:
            printer.print_string(", ")
        printer.print_ssa_value(v)
        printer.print_string(": ")
        printer.print_attribute(v.type.element_type)  # type: ignore[attr-defined]
    printer.print_string(")")


def _print_operands(printer: Printer, keyword: str, values: Sequence[SSAValue]) -> None:
    printer.print_string(f" {keyword}(")
    printer.print_list(values, printer.print_operand)
    printer.print_string(")")


# ------------------------------------------------------------------ ops
@irdl_op_definition
class OperatorOp(IRDLOperation):
    """A node's behaviour; block arguments are its channel ends (inputs, then outputs)."""

    name = "dfg.operator"
    sym_name = prop_def(SymbolNameConstraint())
    num_inputs = prop_def(IntegerAttr[I64])
    input_types = prop_def(Attribute)  # builtin.ArrayAttr of element types (kept for body-less operators)
    output_types = prop_def(Attribute)
    body = region_def()
    traits = traits_def(SymbolOpInterface(), IsolatedFromAbove(), NoTerminator())

    def __init__(self, name: str, inputs: Sequence[Attribute], outputs: Sequence[Attribute],
                 body: Region | None = None, attributes: dict[str, Attribute] | None = None):
        from xdsl.dialects.builtin import ArrayAttr

        super().__init__(
            properties={"sym_name": StringAttr(name), "num_inputs": IntegerAttr(len(inputs), i64),
                        "input_types": ArrayAttr(list(inputs)), "output_types": ArrayAttr(list(outputs))},
            regions=[body if body is not None else Region()], attributes=attributes or {})

    @staticmethod
    def body_block(inputs: Sequence[Attribute], outputs: Sequence[Attribute]) -> Block:
        """An empty body block whose arguments are the operator's channel ends."""
        return Block(arg_types=[InputType(t) for t in inputs] + [OutputType(t) for t in outputs])

    @property
    def inputs(self) -> list[Attribute]:
        return list(self.input_types.data)  # type: ignore[attr-defined]

    @property
    def outputs(self) -> list[Attribute]:
        return list(self.output_types.data)  # type: ignore[attr-defined]

    @property
    def is_external(self) -> bool:
        return not self.body.blocks

    @classmethod
    def parse(cls, parser: Parser) -> OperatorOp:
        name = parser.parse_symbol_name().data
        ins = _parse_typed_args(parser, "inputs", InputType)
        outs = _parse_typed_args(parser, "outputs", OutputType)
        attrs = parser.parse_optional_attr_dict_with_keyword()
        region = parser.parse_optional_region([*ins, *outs])
        op = cls(name, [a.type.element_type for a in ins], [a.type.element_type for a in outs],  # type: ignore
                 region, dict(attrs.data) if attrs else None)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_symbol_name(self.sym_name.data)
        n = self.num_inputs.value.data
        if self.body.blocks:
            args = list(self.body.blocks.first.args)  # type: ignore[union-attr]
            for kw, vals in (("inputs", args[:n]), ("outputs", args[n:])):
                if vals:
                    printer.print_string(f" {kw}(")
                    for k, a in enumerate(vals):
                        if k:
                            printer.print_string(", ")
                        printer.print_block_argument(a, print_type=False)
                        printer.print_string(": ")
                        printer.print_attribute(a.type.element_type)  # type: ignore[attr-defined]
                    printer.print_string(")")
        else:
            for kw, types, prefix in (("inputs", self.inputs, "in"), ("outputs", self.outputs, "out")):
                if types:
                    printer.print_string(f" {kw}(")
                    printer.print_string(", ".join(f"%{prefix}{k}: {t}" for k, t in enumerate(types)))
                    printer.print_string(")")
        printer.print_op_attributes(self.attributes, print_keyword=True)
        if self.body.blocks:
            printer.print_string(" ")
            printer.print_region(self.body, print_entry_block_args=False, print_empty_block=True)

    def verify_(self) -> None:
        where = f"dfg.operator @{self.sym_name.data}"
        if len(self.body.blocks) > 1:
            raise VerifyException(f"{where}: the body must be a single block")
        if self.body.blocks:
            got = [a.type for a in self.body.blocks.first.args]  # type: ignore[union-attr]
            want = [InputType(t) for t in self.inputs] + [OutputType(t) for t in self.outputs]
            if got != want:
                raise VerifyException(f"{where}: body arguments {', '.join(map(str, got))} do not match the "
                                      f"signature {', '.join(map(str, want))}")


@irdl_op_definition
class LoopOp(IRDLOperation):
    """Repeat the body until one channel of the operator is broken."""

    name = "dfg.loop"
    inputs = var_operand_def(InputType)
    outputs = var_operand_def(OutputType)
    body = region_def("single_block")
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    traits = traits_def(NoTerminator())

    def __init__(self, inputs: Sequence[SSAValue], outputs: Sequence[SSAValue], body: Region):
        super().__init__(operands=[list(inputs), list(outputs)], regions=[body])

    @classmethod
    def parse(cls, parser: Parser) -> LoopOp:
        ins = _parse_typed_operands(parser, "inputs")
        outs = _parse_typed_operands(parser, "outputs")
        region = parser.parse_region()
        return cls(ins, outs, region)

    def print(self, printer: Printer) -> None:
        _print_typed(printer, "inputs", self.inputs, True)
        _print_typed(printer, "outputs", self.outputs, True)
        printer.print_string(" ")
        printer.print_region(self.body, print_entry_block_args=False, print_empty_block=True)

    def verify_(self) -> None:
        parent = self.parent_op()
        if not isinstance(parent, OperatorOp) or parent.body.blocks.first is not self.parent_block():
            raise VerifyException("dfg.loop must sit directly in the body of a dfg.operator")
        ends = set(parent.body.blocks.first.args)  # type: ignore[union-attr]
        for v in (*self.inputs, *self.outputs):
            if v not in ends:
                raise VerifyException(f"dfg.loop: {_value_name(v)} is not a channel end of "
                                      f"dfg.operator @{parent.sym_name.data}")


@irdl_op_definition
class ChannelOp(IRDLOperation):
    """A bounded FIFO; results are (input end, output end)."""

    name = "dfg.channel"
    depth = opt_prop_def(IntegerAttr[I64])
    in_end = result_def(InputType)
    out_end = result_def(OutputType)

    def __init__(self, element_type: Attribute, depth: int | None = None):
        props = {} if depth is None else {"depth": IntegerAttr(depth, i64)}
        super().__init__(result_types=[InputType(element_type), OutputType(element_type)], properties=props)

    @property
    def element_type(self) -> Attribute:
        return self.in_end.type.element_type  # type: ignore[attr-defined]

    @property
    def capacity(self) -> int:
        return 1 if self.depth is None else self.depth.value.data

    @classmethod
    def parse(cls, parser: Parser) -> ChannelOp:
        parser.parse_punctuation("(")
        depth = parser.parse_optional_integer()
        parser.parse_punctuation(")")
        parser.parse_punctuation(":")
        elem = parser.parse_type()
        op = cls(elem, depth)
        attrs = parser.parse_optional_attr_dict()
        op.attributes.update(attrs)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string("(" + ("" if self.depth is None else str(self.depth.value.data)) + ") : ")
        printer.print_attribute(self.element_type)
        printer.print_op_attributes(self.attributes)

    def verify_(self) -> None:
        if self.in_end.type.element_type != self.out_end.type.element_type:  # type: ignore[attr-defined]
            raise VerifyException("dfg.channel: both ends must carry the same element type")
        if self.depth is not None and self.depth.value.data < 1:
            raise VerifyException(f"dfg.channel: depth must be >= 1, got {self.depth.value.data}")
        for end, role in ((self.in_end, "input"), (self.out_end, "output")):
            holders = {_holder(use.operation) for use in end.uses}
            if not holders:
                raise VerifyException(f"dfg.channel: the {role} end {_value_name(end)} is never used "
                                      "(every channel end needs exactly one holder)")
            if len(holders) > 1:
                names = sorted(h.name if not isinstance(h, InstantiateOp) else f"dfg.instantiate @"
                               f"{h.callee.root_reference.data}" for h in holders)
                raise VerifyException(f"dfg.channel: the {role} end {_value_name(end)} is held by "
                                      f"{len(holders)} users ({', '.join(names)}); each end has exactly one")


def _holder(op: Operation) -> Operation:
    """Who holds a channel end: the instantiate using it, or the op's enclosing region owner."""
    if isinstance(op, InstantiateOp):
        return op
    holder = op
    while holder.parent_op() is not None and not holder.has_trait(IsolatedFromAbove):
        holder = holder.parent_op()  # type: ignore[assignment]
    return holder


@irdl_op_definition
class PushOp(IRDLOperation):
    name = "dfg.push"
    value = operand_def()
    chan = operand_def(OutputType)

    def __init__(self, value: SSAValue, chan: SSAValue):
        super().__init__(operands=[value, chan])

    @classmethod
    def parse(cls, parser: Parser) -> PushOp:
        parser.parse_punctuation("(")
        value = _operand(parser)
        parser.parse_punctuation(")")
        pos = parser.pos
        chan = _operand(parser)
        if parser.parse_optional_punctuation(":") is not None:
            ty = parser.parse_type()
            if ty != value.type:
                parser.raise_error(f"dfg.push: the value has type {value.type}, not {ty}", pos, parser.pos)
        return cls(value, chan)

    def print(self, printer: Printer) -> None:
        printer.print_string("(")
        printer.print_operand(self.value)
        printer.print_string(") ")
        printer.print_operand(self.chan)
        printer.print_string(" : ")
        printer.print_attribute(self.value.type)

    def verify_(self) -> None:
        ty = self.chan.type
        if isinstance(ty, InputType):
            raise VerifyException(f"dfg.push: {_value_name(self.chan)} is an input end ({ty}); a node pushes "
                                  "into an output end (!dfg.output)")
        if ty.element_type != self.value.type:  # type: ignore[attr-defined]
            raise VerifyException(f"dfg.push: pushing {self.value.type} into a channel of "
                                  f"{ty.element_type}")  # type: ignore[attr-defined]


@irdl_op_definition
class PullOp(IRDLOperation):
    name = "dfg.pull"
    chan = operand_def(InputType)
    result = result_def()

    def __init__(self, chan: SSAValue):
        super().__init__(operands=[chan], result_types=[chan.type.element_type])  # type: ignore[attr-defined]

    @classmethod
    def parse(cls, parser: Parser) -> PullOp:
        pos = parser.pos
        chan = _operand(parser)
        if not isinstance(chan.type, InputType):
            parser.raise_error(f"dfg.pull reads an input end (!dfg.input<T>), got {chan.type} (a node cannot "
                               "read its own output without a channel)", pos, parser.pos)
        if parser.parse_optional_punctuation(":") is not None:
            ty = parser.parse_type()
            if ty != chan.type.element_type:
                parser.raise_error(f"dfg.pull: the channel carries {chan.type.element_type}, not {ty}", pos,
                                   parser.pos)
        return cls(chan)

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.chan)
        printer.print_string(" : ")
        printer.print_attribute(self.result.type)

    def verify_(self) -> None:
        if self.result.type != self.chan.type.element_type:  # type: ignore[attr-defined]
            raise VerifyException("dfg.pull: the result type must be the channel's element type")


@irdl_op_definition
class InstantiateOp(IRDLOperation):
    """One node of the graph: an operator bound to channel ends."""

    name = "dfg.instantiate"
    callee = prop_def(FlatSymbolRefAttr)
    offloaded = opt_prop_def(UnitAttr)
    inputs = var_operand_def(InputType)
    outputs = var_operand_def(OutputType)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    def __init__(self, callee: str, inputs: Sequence[SSAValue], outputs: Sequence[SSAValue],
                 offloaded: bool = False):
        props: dict[str, Attribute] = {"callee": FlatSymbolRefAttr(callee)}
        if offloaded:
            props["offloaded"] = UnitAttr()
        super().__init__(operands=[list(inputs), list(outputs)], properties=props)

    @property
    def is_offloaded(self) -> bool:
        return self.offloaded is not None

    @classmethod
    def parse(cls, parser: Parser) -> InstantiateOp:
        offloaded = parser.parse_optional_keyword("offloaded") is not None
        callee = parser.parse_symbol_name().data
        ins = _parse_operands(parser, "inputs")
        outs = _parse_operands(parser, "outputs")
        if parser.parse_optional_punctuation(":") is not None:  # dfg-mlir's optional (T..) -> (U..) trailer
            parser.parse_function_type()
        op = cls(callee, ins, outs, offloaded)
        attrs = parser.parse_optional_attr_dict_with_keyword()
        if attrs:
            op.attributes.update(attrs.data)
        return op

    def print(self, printer: Printer) -> None:
        if self.is_offloaded:
            printer.print_string(" offloaded")
        printer.print_string(" ")
        printer.print_symbol_name(self.callee.root_reference.data)
        if self.inputs:
            _print_operands(printer, "inputs", self.inputs)
        if self.outputs:
            _print_operands(printer, "outputs", self.outputs)
        printer.print_op_attributes(self.attributes, print_keyword=True)

    def verify_(self) -> None:
        from xdsl.traits import SymbolTable

        name = self.callee.root_reference.data
        where = f"dfg.instantiate @{name}"
        for v in self.inputs:
            if not isinstance(v.type, InputType):
                raise VerifyException(f"{where}: input {_value_name(v)} must be an input end, got {v.type}")
        for v in self.outputs:
            if not isinstance(v.type, OutputType):
                raise VerifyException(f"{where}: output {_value_name(v)} must be an output end, got {v.type}")
        op = SymbolTable.lookup_symbol(self, name)
        if op is None:
            raise VerifyException(f"{where}: no dfg.operator named @{name}")
        if not isinstance(op, OperatorOp):
            raise VerifyException(f"{where}: @{name} is a {op.name}, not a dfg.operator")
        got_in = [v.type.element_type for v in self.inputs]  # type: ignore[attr-defined]
        got_out = [v.type.element_type for v in self.outputs]  # type: ignore[attr-defined]
        if got_in != op.inputs or got_out != op.outputs:
            def sig(i, o):
                return f"({', '.join(map(str, i))}) -> ({', '.join(map(str, o))})"
            raise VerifyException(f"{where}: channels {sig(got_in, got_out)} do not match the operator's "
                                  f"signature {sig(op.inputs, op.outputs)}")


Dfg = Dialect("dfg", [OperatorOp, LoopOp, ChannelOp, PushOp, PullOp, InstantiateOp], [InputType, OutputType])

__all__ = ["Dfg", "InputType", "OutputType", "OperatorOp", "LoopOp", "ChannelOp", "PushOp", "PullOp",
           "InstantiateOp"]
