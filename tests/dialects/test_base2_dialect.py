"""The base2 dialect: types and ops print and parse back, the verifier names what is wrong, the generic
form is accepted by upstream mlir-opt, and mangled text is a LoomError (seeded mutation fuzz)."""

from __future__ import annotations

import random
import subprocess

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.linalg.mlir_exec import HAVE_MLIR, MLIR_OPT
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import ParseError, VerifyException

from loom.core import numformats as nf
from loom.dialects import context
from loom.dialects.base2 import FixedType, FloatType, format_of, type_of
from loom.errors import LoomError
from loom.jit.mlir_function import parse_mlir_file

MODULE = """builtin.module {
  func.func @f(%a: !base2.fixed<8, 8>, %x: f32, %u: !base2.fixed<unsigned 4, 12>) -> !base2.float<4, 3, fnuz, bias = 11> {
    %c = base2.add %a, %a : !base2.fixed<8, 8>
    %d = base2.mul %c, %a {rounding = "truncate", overflow = "saturate"} : !base2.fixed<8, 8>
    %e = base2.cast %x : f32 to !base2.float<8, 7>
    %f = base2.fma %e, %e, %e : !base2.float<8, 7>
    %g = base2.div %f, %e {rounding = "nearest_away", overflow = "inf"} : !base2.float<8, 7>
    %h = base2.sub %u, %u : !base2.fixed<unsigned 4, 12>
    %i = base2.cast %g : !base2.float<8, 7> to !base2.float<4, 3, fnuz, bias = 11>
    func.return %i : !base2.float<4, 3, fnuz, bias = 11>
  }
}"""


def parse(text: str):
    module = Parser(context(), text).parse_module()
    module.verify()
    return module


def test_module_prints_back_identically():
    module = parse(MODULE)
    assert str(module) == MODULE
    assert str(parse(str(module))) == MODULE


def test_types_carry_their_formats():
    for fmt in [nf.FixedFormat(8, 8), nf.FixedFormat(4, 12, False), nf.BF16, nf.FP8_E4M3FN,
                nf.FP8_E4M3B11FNUZ, nf.FloatFormat(6, 9, bias=20)]:
        ty = type_of(fmt)
        assert format_of(ty) == fmt
        assert str(ty) == fmt.mlir
    assert isinstance(type_of(nf.BF16), FloatType) and isinstance(type_of(nf.FixedFormat(1, 1)), FixedType)
    assert str(FloatType(4, 3, special="fn")) == "!base2.float<4, 3, fn>"


@pytest.mark.parametrize("body, message", [
    ('%c = base2.add %a, %a {rounding = "nearest"} : !base2.fixed<8, 8>', "rounding must be one of"),
    ('%c = base2.add %a, %a {overflow = "inf"} : !base2.fixed<8, 8>', "fixed-point or integer result must be one of"),
    ('%c = base2.cast %a {overflow = "wrap"} : !base2.fixed<8, 8> to f32', "a float result must be one of"),
    ("%c = base2.add %x, %x : f32", "must be a !base2 type"),
    ("%c = base2.cast %a : !base2.fixed<8, 8> to i64", "a signless integer of 8..32 bits"),
    ("%c = base2.cast %a : !base2.fixed<8, 8> to ui8", "unsigned integer is !base2.fixed<unsigned N, 0>"),
    ("%c = base2.mul %w, %w : !base2.fixed<unsigned 16, 16>", "too wide for mul/div/fma"),
])
def test_verifier_names_the_problem(body, message):
    text = f"""func.func @f(%a: !base2.fixed<8, 8>, %x: f32, %w: !base2.fixed<unsigned 16, 16>) {{
      {body}
      func.return
    }}"""
    with pytest.raises(VerifyException, match=message):
        parse(text)


@pytest.mark.parametrize("ty, message", [
    ("!base2.fixed<0, 8>", "at least 1 integer bit"),
    ("!base2.fixed<30, 8>", "1..32 bits"),
    ("!base2.float<9, 3>", "exponent bits must be 1..8"),
    ("!base2.float<4, 3, fn, bias = 16>", "bias must be 0..15"),
    ("!base2.float<88888888888, 3>", "exponent bits must be 1..8"),  # found by the mutation fuzz: was a hang
])
def test_bad_types_are_refused(ty, message):
    with pytest.raises(VerifyException, match=message):
        parse(f"func.func @f(%a: {ty}) {{\n func.return\n}}")


def test_bad_type_syntax_is_a_parse_error():
    with pytest.raises(ParseError):
        parse("func.func @f(%a: !base2.float<4, 3, fnz>) {\n func.return\n}")
    # a second special or bias was silently the last one
    with pytest.raises(ParseError, match="special values \\(fn, fnuz\\) twice"):
        parse("func.func @f(%a: !base2.float<4, 3, fn, fnuz>) {\n func.return\n}")
    with pytest.raises(ParseError, match="bias twice"):
        parse("func.func @f(%a: !base2.float<4, 3, bias = 3, bias = 5>) {\n func.return\n}")


def test_file_errors_name_the_file(tmp_path):
    path = tmp_path / "bad.mlir"
    path.write_text(MODULE.replace('"truncate"', '"upward"'))
    with pytest.raises(LoomError) as info:
        parse_mlir_file(path)
    assert "bad.mlir" in str(info.value) and "rounding must be one of" in str(info.value)


@pytest.mark.mlir
@pytest.mark.skipif(not HAVE_MLIR, reason="needs mlir-opt")
def test_generic_form_parses_in_upstream_mlir():
    import io

    stream = io.StringIO()
    Printer(stream=stream, print_generic_format=True).print_op(parse(MODULE))
    proc = subprocess.run([MLIR_OPT, "--allow-unregistered-dialect", "--mlir-print-op-generic"],
                          input=stream.getvalue(), capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert '"base2.fma"' in proc.stdout


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10), st.integers(0, 30), st.sampled_from(["ieee", "fn", "fnuz"]),
       st.one_of(st.none(), st.integers(0, 300)))
def test_float_type_text_fuzz(exp_bits, man_bits, special, bias):
    """Any parameters: the type either round-trips with the reference format, or is a VerifyException."""
    extra = "" if special == "ieee" else f", {special}"
    extra += "" if bias is None else f", bias = {bias}"
    text = f"func.func @f(%a: !base2.float<{exp_bits}, {man_bits}{extra}>) {{\n func.return\n}}"
    try:
        fmt = nf.FloatFormat(exp_bits, man_bits, bias, special)
    except LoomError:
        with pytest.raises(VerifyException):
            parse(text)
        return
    module = parse(text)
    arg_type = next(iter(module.ops)).function_type.inputs.data[0]
    assert format_of(arg_type) == fmt and str(arg_type) == fmt.mlir


def test_mutated_text_is_a_loom_error_or_valid(tmp_path):
    """Seeded mutations of a valid module (characters dropped, duplicated, swapped): loading the file
    either succeeds or raises LoomError, never another exception."""
    rng = random.Random(13)
    alphabet = "<>,{}=\"%:!0123456789 abcdefghijklmnopqrstuvwxyz.-"
    path = tmp_path / "m.mlir"
    for _ in range(60):
        text = list(MODULE)
        for _ in range(rng.randint(1, 3)):
            k = rng.randrange(len(text))
            choice = rng.random()
            if choice < 0.4:
                del text[k]
            elif choice < 0.7:
                text.insert(k, rng.choice(alphabet))
            else:
                text[k] = rng.choice(alphabet)
        path.write_text("".join(text))
        try:
            parse_mlir_file(path)
        except LoomError:
            pass
