"""The ``ubuf`` dialect: cascade's unified buffers as IR carry the thesis' Table 4.1 numbers, the
printed text parses back equal (custom and generic form), the verifiers reject bad designs, upstream
mlir-opt accepts the generic form, and ``loom pipeline --ir`` prints it."""

import io
import re
import time

import islpy as isl
import pytest
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from loom.cli import main
from loom.errors import LoomError
from loom.dialects.ubuf import BufferOp, ConstantOp, DesignOp, KernelOp, PortOp, parse_ir
from loom.streaming.to_ubuf import design_to_ir
from loom.streaming import build_design
from loom.examples.pipelines import load_app as _example




@pytest.fixture(scope="module")
def cascade_ir():
    out, _ = _example("cascade").build("accel", (60, 60))  # a 64x64 input, as in Table 4.1
    return design_to_ir(build_design(out, (60, 60)), name="cascade")


def _design(module) -> DesignOp:
    (top,) = module.ops
    assert isinstance(top, DesignOp)
    return top


def _generic(module) -> str:
    s = io.StringIO()
    Printer(stream=s, print_generic_format=True).print_op(module)
    return s.getvalue()


def _cycle(schedule: str, point: dict) -> int:
    """Evaluate an isl schedule map at one point with isl itself."""
    m = isl.Map(schedule)
    name = m.get_tuple_name(isl.dim_type.in_)
    at = isl.Set(f"{{ {name}[{point['x']}, {point['y']}] }}")
    values = m.intersect_domain(at).range()
    return values.sample_point().get_coordinate_val(isl.dim_type.set, 0).to_python()


def test_cascade_ir_carries_table_4_1(cascade_ir):
    top = _design(cascade_ir)
    assert top.latency.value.data == 4096 and list(top.size.get_values()) == [60, 60]
    bufs = top.buffers()
    assert {n: b.capacity.value.data for n, b in bufs.items()} == {"input": 0, "hw_input": 130, "conv1": 126,
                                                                   "output": 0}
    assert bufs["input"].kind.data == "wire" and bufs["hw_input"].kind.data == "buffer"
    hw_reads = [p for p in bufs["hw_input"].ports() if p.direction.data == "out"]
    assert len(hw_reads) == 9  # a 3x3 stencil: 9 logical read ports
    for p in hw_reads:
        assert p.count.value.data == 62 * 62
        assert "0 <= x <= 61 and 0 <= y <= 61" in p.domain.data
        assert p.schedule.data.endswith("-> [130 + 64y + x] }")
        assert _cycle(p.schedule.data, {"x": 61, "y": 61}) == 130 + 64 * 61 + 61
    offsets = {(p.access.data.split("-> ")[1]) for p in hw_reads}
    assert offsets == {f"hw_input[{a}, {b}] }}" for b in ("y", "1 + y", "2 + y") for a in ("x", "1 + x", "2 + x")}
    (write,) = [p for p in bufs["conv1"].ports() if p.direction.data == "in"]
    assert write.schedule.data.endswith("-> [130 + 64y + x] }")
    out_reads = [p for p in bufs["conv1"].ports() if p.direction.data == "out"]
    assert all(p.schedule.data.endswith("-> [260 + 64y + x] }") and p.count.value.data == 60 * 60 for p in out_reads)
    # last output cycle 260 + 64 * 59 + 59 = 4095
    (host,) = [p for p in bufs["output"].ports() if p.direction.data == "out"]
    assert _cycle(host.schedule.data, {"x": 59, "y": 59}) == 4095
    kernels = {k.stage.data: k for k in top.body.ops if isinstance(k, KernelOp)}
    assert {n: k.offset.value.data for n, k in kernels.items()} == {"hw_input": 0, "conv1": 130, "output": 260}
    assert [r.root_reference.data for r in kernels["conv1"].inputs.data] == ["hw_input"]
    consts = [c for c in top.body.ops if isinstance(c, ConstantOp)]
    assert [(c.sym_name.data, c.kind.data, c.entries.value.data) for c in consts] == [("kernel", "tap register", 9)]


def test_round_trip_custom_and_generic(cascade_ir):
    text = str(cascade_ir)
    assert "ubuf.buffer @hw_input : ui16 extents [64, 64] capacity 130" in text
    back = parse_ir(text)
    assert back.is_structurally_equivalent(cascade_ir)
    assert str(back) == text
    assert parse_ir(_generic(cascade_ir)).is_structurally_equivalent(cascade_ir)


def test_rom_and_three_dimensional_buffers_round_trip():
    out, _ = _example("unsharp").build("accel", (8, 8))
    module = design_to_ir(build_design(out, (8, 8, 3)))
    top = _design(module)
    consts = {c.sym_name.data: c for c in top.body.ops if isinstance(c, ConstantOp)}
    assert consts["reciprocal"].kind.data == "ROM" and consts["reciprocal"].depth.value.data == 256
    assert consts["reciprocal"].pattern.data == "data-dependent"
    assert list(top.buffers()["hw_input"].extents.get_values()) == [14, 14, 3]
    assert parse_ir(str(module)).is_structurally_equivalent(module)


@pytest.fixture(scope="module")
def rom_ir():
    out, _ = _example("unsharp").build("accel", (8, 8))
    return str(design_to_ir(build_design(out, (8, 8, 3))))


@pytest.mark.parametrize("old,new,message", [
    # a ROM entry beyond its element type: numpy wrapped 65536 in a ui16 table to 0, -1 to 65535
    ("extents [256] values [256, 256,", "extents [256] values [256, 65536,",
     "ubuf.constant @reciprocal: value 65536 (entry 1) does not fit the element type ui16 (0 to 65535)"),
    ("extents [256] values [256, 256,", "extents [256] values [256, -1,",
     "ubuf.constant @reciprocal: value -1 (entry 1) does not fit the element type ui16 (0 to 65535)"),
    # a second index of a one-dimensional table: zip() dropped it and the lookup read at the first
    ("ubuf.lookup @reciprocal[%284] : (i32) -> i16", "ubuf.lookup @reciprocal[%284, %284] : (i32, i32) -> i16",
     "ubuf.lookup @reciprocal: 2 indices for a table of 1 dimensions"),
    # another result type: the entries were converted (astype) to it, i1 giving 1 for every nonzero entry
    ("%285 = ubuf.lookup @reciprocal[%284] : (i32) -> i16",
     "%998 = ubuf.lookup @reciprocal[%284] : (i32) -> i1\n      %285 = arith.extui %998 : i1 to i16",
     "ubuf.lookup @reciprocal: gives i1, but the entries of @reciprocal are ui16: a lookup gives i16"),
    ("ubuf.lookup @reciprocal[%284]", "ubuf.lookup @kernal[%284]",
     "ubuf.lookup @kernal: the design has no ubuf.constant @kernal"),
])
def test_tables_and_lookups_are_verified(rom_ir, old, new, message):
    """parse_ir took these; the simulation then wrapped the entry, dropped the index or converted the entries
    (an unknown table was refused only when a kernel ran). They are refused at the op's line."""
    assert old in rom_ir
    text = rom_ir.replace(old, new, 1)
    with pytest.raises(LoomError, match=re.escape(message)) as err:
        parse_ir(text)
    assert err.value.filename == "<ubuf IR>" and new.split("\n")[0] in text.splitlines()[err.value.line - 1]


def _mutated(cascade_ir, old, new, count=1):
    text = str(cascade_ir)
    assert old in text
    return text.replace(old, new, count)


@pytest.mark.parametrize("old,new,message", [
    ('schedule "{ conv1_out[x, y] -> [130 + 64y + x] }"', 'schedule "{ conv1_out[x] -> [130 + x] }"',
     "the schedule map takes 1 loop dimensions but the domain has 2"),
    ('schedule "{ conv1_out[x, y] -> [130 + 64y + x] }"', 'schedule "{ conv2_out[x, y] -> [130 + 64y + x] }"',
     "the schedule map's loops are 'conv2_out' but the domain's 'conv1_out'"),
    ("capacity 130", "capacity -1", "capacity must be >= 0, got -1"),
    ("inputs [@hw_input]", "inputs [@hw_inptu]", "input @hw_inptu is not a ubuf.buffer of design @cascade"),
    ('ubuf.port "out" "conv1#0"', 'ubuf.port "sideways" "conv1#0"', 'direction must be "in" or "out"'),
    ("-> hw_input[1 + x, y] }", "-> hw_input[1 + x] }", "the access map gives 1 indices but buffer @hw_input has 2"),
    ('schedule "{ conv1_out[x, y] -> [130 + 64y + x] }"', 'schedule "{ conv1_out[x, y] -> [130 + 64y + x, 0] }"',
     "the schedule must map to one cycle"),
    ('domain "{ conv1_out[x, y] : 0 <= x <= 61', 'domain "{ conv1_out[x, y] : 0 <= x <=< 61',
     "is not valid isl syntax"),
    ('capacity 0 kind "wire"', 'capacity 3 kind "wire"', "a wire holds no values, but capacity is 3"),
])
def test_verifier_rejects(cascade_ir, old, new, message):
    text = _mutated(cascade_ir, old, new)
    with pytest.raises(LoomError, match=re.escape(message)) as err:
        parse_ir(text)
    # the LoomError points at the edited op's line of the text
    assert err.value.filename == "<ubuf IR>" and new in text.splitlines()[err.value.line - 1]


def test_verifier_rejects_a_port_outside_a_buffer():
    port = PortOp("in", "in", "host", "{ s[x] : 0 <= x <= 3 }", "{ s[x] -> b[x] }", "{ s[x] -> [x] }", 4)
    with pytest.raises(VerifyException, match="ubuf.buffer"):
        DesignOp("d", 4, 1, [4], [port]).verify()


def test_verifier_rejects_a_buffer_without_a_write_port():
    read = PortOp("out", "k#0", "k", "{ s[x] : 0 <= x <= 3 }", "{ s[x] -> b[x] }", "{ s[x] -> [x] }", 4)
    buf = BufferOp("b", _u8(), [4], 0, "wire", "streaming", "affine", "wire", [read])
    with pytest.raises(VerifyException, match="exactly one write port"):
        DesignOp("d", 4, 1, [4], [buf]).verify()


def _u8():
    from loom.streaming.to_ubuf import element_type
    from loom.frontends.pipeline import UInt8

    return element_type(UInt8)


@pytest.mark.mlir
def test_generic_form_verifies_upstream(cascade_ir):
    from loom.oracle.mlir import verify

    verify(cascade_ir, allow_unregistered=True)


def test_command_prints_the_ir(capsys):
    assert main(["pipeline", "cascade", "--size", "60x60", "--ir"]) == 0
    text = capsys.readouterr().out
    module = parse_ir(text)
    top = _design(module)
    assert top.sym_name.data == "cascade" and top.buffers()["conv1"].capacity.value.data == 126


def test_command_names_a_missing_apps_folder(capsys, monkeypatch, tmp_path):
    missing = tmp_path / "nowhere"
    monkeypatch.setenv("LOOM_PIPELINE_APPS", str(missing))
    assert main(["pipeline", "cascade", "--ir"]) == 1
    err = capsys.readouterr().err
    assert f"the pipeline apps folder {missing} does not exist" in err and "Traceback" not in err


@pytest.mark.parametrize("name", ["pointwise", "gaussian", "harris", "unsharp", "camera_pipeline", "conv_layer",
                                  "gemm"])
def test_every_app_design_round_trips(name):
    size = (9, 7)
    app = _example(name)
    out, _ = app.build("accel", tile=size)
    design = build_design(out, app.output_shape(size))
    module = design_to_ir(design)
    top = _design(module)
    assert top.latency.value.data == design.latency
    assert {n: b.capacity.value.data for n, b in top.buffers().items()} == design.capacities
    assert parse_ir(str(module)).is_structurally_equivalent(module)


def test_reduction_in_time_exports_its_accumulator():
    """gemm with K iterated in time (2 per cycle): the accumulator is a buffer of kind accumulation
    with one write and one read port, and the IR round-trips and verifies upstream."""
    design = build_design(_example("gemm").build("accel", tile=(8, 8), k_unroll=2)[0], (8, 8))
    module = design_to_ir(design)
    buffers = {op.sym_name.data: op for op in module.walk() if isinstance(op, BufferOp)}
    (name,) = [n for n in buffers if n.endswith("_acc")]
    acc = buffers[name]
    assert acc.kind.data == "accumulation"
    assert acc.capacity.value.data == design.accumulators[name].capacity
    directions = sorted(p.direction.data for p in acc.body.block.ops)
    assert directions == ["in", "out"]
    assert str(parse_ir(str(module))) == str(module)


@pytest.mark.mlir
def test_reduction_in_time_ir_verifies_upstream():
    from loom.oracle import mlir

    design = build_design(_example("gemm").build("accel", tile=(8, 8), k_unroll=2)[0], (8, 8))
    mlir.verify(design_to_ir(design), allow_unregistered=True)


@pytest.mark.parametrize("edit", [
    lambda t: t.replace('x] }" count', "x] } count", 1),  # a closing quote deleted: the string runs to the line end
    lambda t: t.replace("-> hw_input[x, y] }", "-> hw_input[x\\q, y] }", 1),  # an escape MLIR does not have
    lambda t: t[:t.index("0 <= x <= 59") + 8],  # the text cut inside a string
])
def test_a_string_not_closed_on_its_line_is_refused_at_once(cascade_ir, edit):
    """xDSL's string pattern backtracked exponentially in the length of a string that does not close on its
    line (a deleted quote hung parse_ir); the parser's own pattern refuses it at the string's line, in linear
    time."""
    text = edit(str(cascade_ir))
    start = time.monotonic()
    with pytest.raises(LoomError, match=r"<ubuf IR>:\d+:\d+: this string is not closed on its line") as err:
        parse_ir(text)
    assert time.monotonic() - start < 2
    assert text.splitlines()[err.value.line - 1][err.value.column - 1] == '"'


def test_a_text_opening_with_an_unclosed_string_is_a_loom_error():
    """The first token is read when the parser is made: its error too is a located LoomError."""
    with pytest.raises(LoomError, match=r"<ubuf IR>:1:1: this string is not closed on its line"):
        parse_ir('"builtin.module')


@pytest.mark.parametrize("old,new,message", [
    ("values [1, 2, 1, 2, 4, 2, 1, 2, 1]", "values [1, 2, 1, 2, 4, 2, 1, 2, 18446744073709551616]",
     "18446744073709551616 is out of range: ubuf.constant's integers are signed 64-bit"),
    ("count 3600", "count 99999999999999999999", "99999999999999999999 is out of range: ubuf.port's integers are "
                                                 "signed 64-bit"),
])
def test_a_value_refused_at_the_end_of_a_line_is_reported_on_that_line(cascade_ir, old, new, message):
    """The parser reads a token ahead: a value refused as the last token of an op's line was reported at
    the next line (the following op)."""
    text = _mutated(cascade_ir, old, new)
    with pytest.raises(LoomError, match=re.escape(message)) as err:
        parse_ir(text)
    assert new in text.splitlines()[err.value.line - 1]


def test_an_integer_beyond_i64_is_refused_as_written(cascade_ir):
    """xDSL read capacity 18446744073709551615 as -1, so the verifier said "got -1"; the written value is refused
    at its column."""
    text = _mutated(cascade_ir, "capacity 130", "capacity 18446744073709551615")
    with pytest.raises(LoomError, match=r"18446744073709551615 is out of range: ubuf.buffer's integers are signed "
                                        r"64-bit, at most 9223372036854775807") as err:
        parse_ir(text)
    line = text.splitlines()[err.value.line - 1]
    assert line[err.value.column - 1:].startswith("18446744073709551615")


@pytest.mark.parametrize("text", ["", "  \n\n"])
def test_an_empty_text_is_refused_as_empty(text):
    with pytest.raises(LoomError, match="<ubuf IR>: the text is empty: expected printed ubuf IR, a module holding "
                                        "one ubuf.design"):
        parse_ir(text)
