"""Bad input to the HLS backend: a LoomError naming the place and what was expected; fuzzed parsers."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from loom.backends.hls import HlsType, csim_inputs, emit_hls, emit_testbench, parse_hls_type
from loom.backends.hls.csim import compile_and_run
from loom.dialects.dims import parse_dims
from loom.errors import LoomError
from loom.examples.kernels import matmul_loops
from tests.backends.hls.hls_helpers import parse
from tests.backends.hls.test_hls_mlir import FIR

DIMS = {"M": 4, "N": 4, "K": 4}


def test_dynamic_shapes_need_dims():
    with pytest.raises(LoomError, match=r"argument 0 \(A\) has a dynamic or strided shape memref<\?x\?xf32>.*"
                                        r"sizes of M, K") as info:
        emit_hls(matmul_loops.module)
    assert info.value.where == "@matmul_loops"


@pytest.mark.parametrize("kwargs, where, message", [
    ({"interface": "pcie"}, "interface", "expected one of m_axi, axis"),
    ({"ii": 0}, "ii", "positive integer"),
    ({"unroll": 0}, "unroll", "positive integer"),
    ({"full_unroll": -1}, "full_unroll", "non-negative"),
    ({"types": {"f32": "ap_int<8>"}}, "types['f32']", "float type maps to ap_fixed"),
    ({"types": {"i32": "ap_fixed<8,2>"}}, "types['i32']", "integer type maps to ap_int"),
    ({"types": {"i32": "ap_uint<20>"}}, "types['i32']", r"i32 is signless .* maps to ap_int<20>; ap_uint serves ui"),
    ({"types": {"index": "ap_int<8>"}}, "types['index']", "keys are MLIR float or integer spellings"),
    ({"types": {"f32": "ap_fixed<100,2>"}}, "types['f32']", "widths are 1..64 bits"),
    ({"types": {"f32": "ap_fixed<16>"}}, "types['f32']", "ap_fixed takes <W, I"),
    ({"types": {"f32": "ap_fixed<16,8,AP_ROUND>"}}, "types['f32']", "unknown quantisation mode"),
    ({"top": "nope"}, "top", "no function @nope in the module; it has @matmul_loops"),
])
def test_bad_options_name_the_option(kwargs, where, message):
    with pytest.raises(LoomError, match=message) as info:
        emit_hls(matmul_loops.module, dims=DIMS, **kwargs)
    assert info.value.where == where


def test_two_public_functions_need_a_top():
    text = FIR.replace("func.func @fir(", "func.func @fir2(%q: memref<4xf32>) {\n    func.return\n  }\n"
                                         "  func.func @fir(")
    with pytest.raises(LoomError, match=r"2 public functions \(@fir2, @fir\); name the top one"):
        emit_hls(parse(text))
    assert "void fir(" in emit_hls(parse(text), top="fir").source


def test_external_functions_and_dynamic_buffers_are_refused():
    external = """builtin.module {
  func.func private @ext(memref<4xf32>) -> ()
  func.func @k(%a: memref<4xf32>) {
    func.call @ext(%a) : (memref<4xf32>) -> ()
    func.return
  }
}"""
    with pytest.raises(LoomError, match="external function @ext: HLS C\\+\\+ needs every function's body"):
        emit_hls(parse(external))
    dynamic = """builtin.module {
  func.func @k(%a: memref<4xf32>, %n: index) {
    %b = memref.alloc(%n) : memref<?xf32>
    %c0 = arith.constant 0 : index
    %x = memref.load %a[%c0] : memref<4xf32>
    memref.store %x, %b[%c0] : memref<?xf32>
    %y = memref.load %b[%c0] : memref<?xf32>
    memref.store %y, %a[%c0] : memref<4xf32>
    memref.dealloc %b : memref<?xf32>
    func.return
  }
}"""
    with pytest.raises(LoomError, match=r"HLS needs buffers of a static shape"):
        emit_hls(parse(dynamic))
    huge = dynamic.replace("memref.alloc(%n) : memref<?xf32>", "memref.alloc() : memref<1000000xf32>").replace(
        "memref<?xf32>", "memref<1000000xf32>")
    with pytest.raises(LoomError, match=r"needs 4000000 bytes"):
        emit_hls(parse(huge))


def test_base2_ops_say_which_pass_lowers_them():
    module = parse("""
    func.func @f(%a: memref<4x!base2.fixed<4, 4>>) {
      %c0 = arith.constant 0 : index
      %x = memref.load %a[%c0] : memref<4x!base2.fixed<4, 4>>
      %y = base2.add %x, %x : !base2.fixed<4, 4>
      memref.store %y, %a[%c0] : memref<4x!base2.fixed<4, 4>>
      func.return
    }""")
    with pytest.raises(LoomError, match="cannot lower base2.add .*lowered by lower-base2-to-arith first"):
        emit_hls(module)


def test_f16_and_bitcasts_of_mapped_types():
    half = """builtin.module {
  func.func @k(%a: memref<4xf16>) {
    func.return
  }
}"""
    with pytest.raises(LoomError, match="f16 has no C\\+\\+ type"):
        emit_hls(parse(half))
    assert "ap_fixed<16, 6> a[4]" in emit_hls(parse(half), types={"f16": "ap_fixed<16,6>"}).source
    bits = """builtin.module {
  func.func @k(%a: memref<4xf32>, %b: memref<4xi32>) {
    %c0 = arith.constant 0 : index
    %x = memref.load %a[%c0] : memref<4xf32>
    %y = arith.bitcast %x : f32 to i32
    memref.store %y, %b[%c0] : memref<4xi32>
    func.return
  }
}"""
    assert "memcpy" in emit_hls(parse(bits)).source
    with pytest.raises(LoomError, match="arith.bitcast of a value computed in an ap_\\* type"):
        emit_hls(parse(bits), types={"f32": "ap_fixed<16,8>"})


@pytest.mark.parametrize("name, value, message", [
    ("s", "abc", "expected a number for the f32 scalar"),  # was a ValueError from float()
    ("s", float("nan"), "expected a finite number"),  # was a testbench that does not compile
    ("n", 2.5, "expected an integer"),  # was truncated to 2
    ("n", 2 ** 40, r"expected an integer in -2147483648..4294967295"),  # was wrapped to 0
    ("n", True, "expected a number"),
])
def test_scalar_overrides_are_checked(name, value, message):
    program = emit_hls(parse("""
    func.func @k(%a: memref<4xf32>, %s: f32, %n: i32) {
      %c0 = arith.constant 0 : index
      %x = memref.load %a[%c0] : memref<4xf32>
      %y = arith.mulf %x, %s : f32
      memref.store %y, %a[%c0] : memref<4xf32>
      func.return
    }"""))
    for call in (csim_inputs, emit_testbench):
        with pytest.raises(LoomError, match=message) as err:
            call(program, {name: value})
        assert err.value.where == f"scalars[{name!r}]"
    assert csim_inputs(program, {"n": 7.0, "s": 0.25})["n"] == 7  # integral floats are fine


def test_unknown_scalar_override_and_a_broken_source():
    program = emit_hls(parse(FIR))
    with pytest.raises(LoomError, match="no scalar argument 'n'; the top function's scalars are none") as info:
        csim_inputs(program, scalars={"n": 3})
    assert info.value.where == "scalars"
    broken = replace(program, source=program.source + "int forgotten() { int unused; return 0; }\n")
    with pytest.raises(LoomError, match="does not compile with g\\+\\+ -std=c\\+\\+17 -Wall -Wextra -Werror"):
        compile_and_run(broken, "int main() { return 0; }\n")


def _mutate(rng: random.Random, text: str) -> str:
    chars = list(text)
    for _ in range(rng.randint(1, 4)):
        action = rng.randrange(3)
        pos = rng.randrange(len(chars) + 1)
        if action == 0 and chars:
            del chars[min(pos, len(chars) - 1)]
        elif action == 1:
            chars.insert(pos, rng.choice("<>,-0123456789 apAP_fixedintRNDSAT\n\x00é"))
        elif chars:
            chars[min(pos, len(chars) - 1)] = rng.choice("<>,9x_ ")
    return "".join(chars)


def test_fuzz_hls_type_parser():
    rng = random.Random(13)
    seeds = ["ap_fixed<16,8,AP_RND,AP_SAT>", "ap_int<12>", "ap_ufixed<8, 2>", "ap_uint<64>", "ap_fixed<4,-3>"]
    parsed = 0
    for _ in range(3000):
        text = _mutate(rng, rng.choice(seeds))
        try:
            t = parse_hls_type(text, where="fuzz")
        except LoomError as error:
            assert error.where == "fuzz"
            continue
        assert isinstance(t, HlsType) and parse_hls_type(t.ctype) == t  # spelled back, read back
        parsed += 1
    assert parsed > 50  # the mutator keeps some inputs valid


def test_fuzz_dims_parser():
    rng = random.Random(5)
    for _ in range(3000):
        text = _mutate(rng, rng.choice(["M=16,N=8", "K=3", "H=480, W=640"]))
        try:
            dims = parse_dims(text, where="dims")
        except LoomError as error:
            assert error.where == "dims" and "bad dims entry" in error.message
            continue
        assert all(name.isidentifier() and size > 0 for name, size in dims.items())


def test_fuzz_options_always_give_consistent_pragmas():
    """Random option sets on the FIR: every pipelined loop is a loop, partition factors fit the buffers."""
    rng = random.Random(8)
    module = parse(FIR)
    for _ in range(40):
        program = emit_hls(module, ii=rng.choice([None, 1, 2, 4]), unroll=rng.randint(1, 6),
                           full_unroll=rng.choice([0, 3, 4, 16, 100]), partition=rng.random() < 0.8,
                           interface=rng.choice(["m_axi", "axis"]))
        for line in program.source.splitlines():
            if "cyclic factor=" in line:
                factor = int(line.split("factor=")[1].split()[0])
                assert 2 <= factor < 64
        assert program.source.count("PIPELINE") >= 2


def test_unknown_dim_is_refused_naming_the_kernels_dims():
    # a typo used to be dropped silently (loom hls --dims refused it; the library did not)
    with pytest.raises(LoomError, match=r"kernel matmul_loops has no dim Q \(its dims: K, M, N\)"):
        emit_hls(matmul_loops.module, dims={**DIMS, "Q": 3})


def _binary(op: str) -> str:
    return f"""builtin.module {{
  func.func @acc(%a: memref<4xf32>, %b: memref<4xf32>) {{
    %c0 = arith.constant 0 : index
    %x = memref.load %a[%c0] : memref<4xf32>
    %y = memref.load %b[%c0] : memref<4xf32>
    %z = arith.{op} %x, %y : f32
    memref.store %z, %b[%c0] : memref<4xf32>
    func.return
  }}
}}"""


@pytest.mark.parametrize("op, fmt, message", [
    ("addf", "ap_fixed<64,32>", r"\+ of ap_fixed<64, 32> values is exact in a 65-bit ap_fixed<65, 33>"),
    ("subf", "ap_ufixed<63,32>", r"- of ap_ufixed<63, 32> values is exact in a 65-bit ap_fixed<65, 34>"),
    ("mulf", "ap_fixed<33,8>", r"\* of ap_fixed<33, 8> values is exact in a 66-bit ap_fixed<66, 16>"),
])
def test_exact_fixed_results_wider_than_64_bits_are_refused_at_emission(op, fmt, message):
    # these used to reach the user as a static_assert in g++'s output when the C-simulation compiled
    with pytest.raises(LoomError, match=f"in kernel 'acc': {message}.*at most 64 bits"):
        emit_hls(parse(_binary(op)), types={"f32": fmt})


def test_exact_fixed_results_of_64_bits_compile():
    for op, fmt in [("addf", "ap_fixed<63,32>"), ("subf", "ap_ufixed<62,32>"), ("mulf", "ap_fixed<32,8>")]:
        program = emit_hls(parse(_binary(op)), types={"f32": fmt})
        compile_and_run(program, emit_testbench(program))  # raises when g++ refuses the C++
