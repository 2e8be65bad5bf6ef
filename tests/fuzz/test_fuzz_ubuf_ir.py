"""Fuzz the ``ubuf`` IR reader: the printed IR of small designs, mutated the ways a hand edit goes wrong
(integers in access maps, extents, capacities, schedules and kernel constants changed; lines deleted,
duplicated or swapped; operand names swapped; the text cut short; types replaced) and edited consistently
(a stage retimed with its ports and kernel offset, a kernel's result passed through more ops), goes through
``parse_ir`` and ``simulate(..., ir=text)``.

The contract: each either succeeds or raises a ``LoomError`` that names a place (``<ubuf IR>:line:col``,
an op, a buffer, a port); never another exception, never a hang. A simulation that succeeds must not have
read outside a buffer: every read port's accesses over its domain lie inside the buffer's extents (checked
here with isl, independently of the simulator), so a mutation that moves a read outside is refused rather
than answered with numpy's wraparound.

Seeds: a 3x3 cascade (stencils), the same cascade with its kernels shared, a 2x2 max pool (strided
reads), a gemm with its reduction iterated in time (an accumulator and an update region) and a gamma
table read at data-dependent addresses (a ROM, ``ubuf.lookup``). Bounded for CI; ``LOOM_FUZZ_SCALE``
multiplies the example counts.
"""

from __future__ import annotations

import contextlib
import functools
import random
import re
import signal
import traceback

import islpy as isl
import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loom.dialects.ubuf import BufferOp, parse_ir
from loom.errors import LoomError
from loom.examples.pipelines import cascade, gemm, max_pool
from loom.streaming import build_design, simulate
from loom.streaming.to_ubuf import design_to_ir
from tests.fuzz.accel_mutator import FUZZ_SCALE
from tests.streaming.test_streaming_constant_buffers import gamma_rom_pipeline

SLOW_RUN = 10.0  # seconds: a mutated design this slow to simulate is a hang in the making


class Seed:
    """A small design, its inputs and its printed IR."""

    def __init__(self, out, tile, inputs, size=None):
        self.out, self.tile, self.inputs, self.size = out, tile, inputs, size or tile
        self.design = build_design(out, tile)
        self.text = str(design_to_ir(self.design))

    def simulate(self, text: str):
        return simulate(self.out, self.inputs, self.size, design=self.design, ir=text)


def _gamma_table():
    """A gamma table read at data-dependent addresses: a ROM the kernels read with ubuf.lookup."""
    out = gamma_rom_pipeline(np.random.default_rng(7).integers(0, 256, 256).astype(np.uint8), (4, 3))
    img = np.random.default_rng(8).integers(0, 256, (3, 5), dtype=np.uint8)
    return Seed(out, (4, 3), {"input": img})


@functools.cache
def seeds() -> tuple[Seed, ...]:
    rng = np.random.default_rng(3)
    return (
        Seed(cascade.build("accel", tile=(8, 6))[0], (8, 6), cascade.make_inputs((8, 6), rng)),
        Seed(cascade.build("accel", tile=(8, 6), share="line")[0], (8, 6), cascade.make_inputs((8, 6), rng)),
        Seed(max_pool.build("accel", tile=(4, 4))[0], (4, 4), max_pool.make_inputs((4, 4), rng)),
        Seed(gemm.build("accel", tile=(4, 4), k_unroll=2)[0], (4, 4), gemm.make_inputs((4, 4), rng)),
        _gamma_table(),
    )


# ------------------------------------------------------------------------------ mutations
# each takes a seeded random.Random and the text, and returns the edited text (or the text itself when it
# finds nothing to edit)

_INTEGER = re.compile(r"(?<![\w%#.^])-?\d+(?![\w#.])")  # not inside an SSA name, a port name or a float
_NEW_INTEGERS = [0, 1, -1, 2, 3, 7, 16, 255, 256, 4096, 2**31 - 1, 2**31, -2**31, 2**32, 2**63 - 1, 2**63, -2**63,
                 2**64, 10**30]


def _new_integer(rng: random.Random, old: int) -> int:
    return rng.choice([old + 1, old - 1, -old, 2 * old, old // 2, rng.randint(-20, 20),
                       rng.choice(_NEW_INTEGERS)])


def _replace_match(text: str, m: re.Match, new: str) -> str:
    return text[:m.start()] + new + text[m.end():]


def change_integer(rng, text):
    """Any integer: an extent, a capacity, a count, a schedule constant, an offset, a kernel constant..."""
    found = list(_INTEGER.finditer(text))
    if not found:
        return text
    m = rng.choice(found)
    return _replace_match(text, m, str(_new_integer(rng, int(m.group()))))


def _quoted_isl(rng, text, field):
    found = list(re.finditer(rf'{field} "([^"]*)"', text))
    return rng.choice(found) if found else None


def change_isl_integer(rng, text):
    """An integer inside an access map, a schedule or a domain (coefficients, offsets, bounds)."""
    m = _quoted_isl(rng, text, rng.choice(["access", "schedule", "domain"]))
    if m is None:
        return text
    body = m.group(1)
    ints = list(re.finditer(r"\d+", body))
    if not ints:
        return text
    k = rng.choice(ints)
    body = body[:k.start()] + str(abs(_new_integer(rng, int(k.group())))) + body[k.end():]
    return text[:m.start(1)] + body + text[m.end(1):]


_ISL_EDITS = [("x", "-x"), ("x", "2x"), ("x", "y"), ("y", "x"), ("x", "x/2"), ("x", "floor(x/2)"), ("x", "3x + 1"),
              ("[", "[-1 + "), ("[", "[100 + "), ("]", " + 1]"), ("]", ", 0]"), ("x, ", ""),
              (" }", " : x > 0 }"), (" }", " : x < 0 }"), ("->", ""), ("{", ""), ("x", "x mod 3"), ("y", "2y - 1")]


def edit_isl(rng, text):
    """A small edit inside an access map or a schedule: negate, scale, swap or divide a loop variable, shift or
    add an index, restrict the domain, break the syntax."""
    m = _quoted_isl(rng, text, rng.choice(["access", "access", "schedule"]))
    if m is None:
        return text
    body = m.group(1)
    old, new = rng.choice(_ISL_EDITS)
    spots = [i for i in range(len(body)) if body.startswith(old, i)]
    if "->" in body and old in ("x", "y"):  # edit the right-hand side, where an index is computed
        spots = [i for i in spots if i > body.index("->")] or spots
    if not spots:
        return text
    i = rng.choice(spots)
    body = body[:i] + new + body[i + len(old):]
    return text[:m.start(1)] + body + text[m.end(1):]


def _lines(text):
    return text.split("\n")


def delete_line(rng, text):
    if not text:
        return text
    lines = _lines(text)
    del lines[rng.randrange(len(lines))]
    return "\n".join(lines)


def duplicate_line(rng, text):
    lines = _lines(text)
    i = rng.randrange(len(lines))
    lines.insert(rng.randrange(len(lines) + 1), lines[i])
    return "\n".join(lines)


def swap_lines(rng, text):
    lines = _lines(text)
    i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
    lines[i], lines[j] = lines[j], lines[i]
    return "\n".join(lines)


def swap_operands(rng, text):
    """One use of an SSA value replaced by another value of the text (maybe of another type or region)."""
    uses = [m for m in re.finditer(r"%\d+", text) if not text.startswith(" =", m.end())]
    if not uses:
        return text
    names = sorted({m.group() for m in uses})
    m = rng.choice(uses)
    return _replace_match(text, m, rng.choice(names + ["%0", "%999"]))


def swap_names(rng, text):
    """A buffer, port, stage or table name replaced by another name of the text."""
    found = list(re.finditer(r'(?<=@)\w+|(?<=")[\w#/]+(?=")', text))
    if not found:
        return text
    m = rng.choice(found)
    return _replace_match(text, m, rng.choice(found).group())


_TYPES = ["i1", "i8", "i16", "i32", "i64", "ui8", "ui16", "ui32", "si32", "f16", "f32", "f64", "index", "i7", "bf16",
          "i0", "none", "tensor<4xi8>"]


def _replace_one(rng, text, pattern, choices):
    """One match of ``pattern`` in ``text``, picked at random, replaced by one of ``choices``."""
    found = list(re.finditer(pattern, text))
    if not found:
        return text
    return _replace_match(text, rng.choice(found), rng.choice(choices))


def replace_type(rng, text):
    return _replace_one(rng, text, r"(?<![\w%])(?:[su]?i\d+|f\d+|bf16|index)\b", _TYPES)


_OPS = ["arith.addi", "arith.subi", "arith.muli", "arith.divui", "arith.remui", "arith.floordivsi", "arith.ceildivsi",
        "arith.remsi", "arith.shli", "arith.shrui", "arith.shrsi", "arith.maxui", "arith.minsi", "arith.andi",
        "arith.xori", "arith.addf", "arith.extui", "arith.extsi", "arith.trunci", "arith.uitofp", "arith.bitcast",
        "arith.index_cast", "math.absi", "ubuf.yield", "ubuf.lookup", "arith.select", "arith.nosuch"]


def replace_op(rng, text):
    return _replace_one(rng, text, r"\b(?:arith|math|ubuf)\.\w+", _OPS)


_WORDS = {'"in"': '"out"', '"out"': '"in"', '"wire"': '"buffer"', '"buffer"': '"accumulation"',
          '"stream"': '"wire"', '"line"': '"pixel"', '"pixel"': '"block"', "period": "period -1 period",
          "latency": "latency -1 latency", "capacity": "capacity 0 capacity", "} {\n    }": "}",
          "ubuf.yield": "ubuf.yield %0 : i32\n      ubuf.yield"}


def replace_word(rng, text):
    present = [w for w in _WORDS if w in text]
    if not present:
        return text
    word = rng.choice(present)
    spots = [m.start() for m in re.finditer(re.escape(word), text)]
    i = rng.choice(spots)
    return text[:i] + _WORDS[word] + text[i + len(word):]


def set_capacity(rng, text):
    """A buffer's capacity (live values) made smaller, larger, zero or absurd."""
    found = list(re.finditer(r"(?<=capacity )-?\d+", text))
    if not found:
        return text
    m = rng.choice(found)
    return _replace_match(text, m, str(_new_integer(rng, int(m.group()))))


def _stage_schedules(text: str, stage: str, output: bool):
    """The schedule strings of ``stage``'s ports (and of the host's read of the output when it is the output)."""
    tuples = [f"{stage}_in", f"{stage}_out"] + (["host_out"] if output else [])
    return [m for m in re.finditer(r'schedule "\{ (\w+)\[[^\]]*\] -> \[([^\]]*)\] \}"', text)
            if m.group(1) in tuples]


def _output_stage(text: str):
    m = re.search(r'ubuf.port "out" "host" stage "host" domain "\{ host_out', text)
    if m is None:
        return None
    return re.findall(r"ubuf.buffer @(\w+)", text[:m.start()])[-1]


def _edit_schedules(text: str, spans, edit) -> str:
    for m in sorted(spans, key=lambda m: -m.start(2)):
        text = text[:m.start(2)] + edit(m.group(2)) + text[m.end(2):]
    return text


def _latency(text: str, stage: str):
    """The cycle after the output's last write, read from its write port with isl."""
    m = re.search(rf'"in" "in" stage "{stage}" domain "([^"]*)" access "[^"]*" schedule "([^"]*)"', text)
    if m is None:
        return None
    cycles = isl.Set(m.group(1)).apply(isl.Map(m.group(2)))
    return cycles.dim_max_val(0).to_python() + 1


def retime_stage(rng, text):
    """A stage moved in time the way ir_timing asks (its write port, read ports and kernel offset together, and
    the design's latency when it is the output): shifted by a few cycles, or one loop's stride changed, so the
    checks of read-before-write, capacity and sharing see a consistent edit."""
    stages = re.findall(r'ubuf.kernel "(\w+)"', text)
    if not stages:
        return text
    stage, output = rng.choice(stages), _output_stage(text)
    spans = _stage_schedules(text, stage, stage == output)
    if rng.random() < 0.5:
        delta = rng.choice([-3, -1, 1, 2, 5, 40, -100])
        text = _edit_schedules(text, spans, lambda e: f"{delta} + {e}")
        text = re.sub(rf'(ubuf.kernel "{stage}" .*? offset )(-?\d+)', lambda k: k.group(1) + str(int(k.group(2)) +
                      delta), text, count=1)
    else:
        loop, factor = rng.choice("xyz"), rng.choice([0, 2, 3, -1, 7])
        text = _edit_schedules(text, spans, lambda e: re.sub(rf"(?<![\w])(\d*){loop}\b",
                                                             lambda t: f"{int(t.group(1) or 1) * factor}{loop}", e))
    if stage == output:
        try:
            latency = _latency(text, stage)
        except isl.Error:
            latency = None
        if latency is not None:
            text = re.sub(r"(ubuf.design @\w+ latency )-?\d+", rf"\g<1>{latency}", text, count=1)
    return text


_BINARY = ["addi", "subi", "muli", "divui", "remui", "floordivsi", "ceildivsi", "remsi", "shli", "shrui", "shrsi",
           "minsi", "maxui", "andi", "ori", "xori"]


def _value_chain(rng, v: str, t: str, n: str) -> list[str]:
    """Ops computing a new value %{n} of integer type ``t`` from %``v``: arithmetic with itself or a constant,
    through i1, f32 or index and back."""
    width = int(t[1:])
    op = rng.choice(_BINARY)
    k = rng.choice([0, 1, -1, 3, width, width + 1, 2 ** (width - 1) - 1, -2 ** (width - 1)])
    return rng.choice([
        [f"%{n} = arith.{op} %{v}, %{v} : {t}"],
        [f"%{n}c = arith.constant {k} : {t}", f"%{n} = arith.{op} %{v}, %{n}c : {t}"],
        [f"%{n}b = arith.trunci %{v} : {t} to i1", f"%{n}c = arith.{op} %{n}b, %{n}b : i1",
         f"%{n} = arith.{rng.choice(['extui', 'extsi'])} %{n}c : i1 to {t}"],
        [f"%{n}f = arith.{rng.choice(['uitofp', 'sitofp'])} %{v} : {t} to f32",
         f"%{n} = arith.fptosi %{n}f : f32 to {t}"],
        [f"%{n}i = arith.{rng.choice(['index_cast', 'bitcast'])} %{v} : {t} to index",
         f"%{n} = arith.index_cast %{n}i : index to {t}"],
        [f"%{n} = math.absi %{v} : {t}"],
        [f"%{n}b = arith.cmpi {rng.choice(['slt', 'ult', 'eq'])}, %{v}, %{v} : {t}",
         f"%{n} = arith.select %{n}b, %{v}, %{v} : {t}"],
    ])


def rewrite_kernel(rng, text):
    """A kernel's yielded integer passed through a few more ops (valid IR: the kernel computes something
    else), or one of its binary ops replaced by another."""
    if rng.random() < 0.3:
        found = list(re.finditer(r"(?<== )arith\.(?:" + "|".join(_BINARY) + r")(?= %)", text))
        if not found:
            return text
        return _replace_match(text, rng.choice(found), f"arith.{rng.choice(_BINARY)}")
    found = list(re.finditer(r"( *)ubuf\.yield %(\w+) : (i8|i16|i32|i64)\n", text))
    if not found:
        return text
    m = rng.choice(found)
    indent, v, t = m.groups()
    n = f"fz{rng.randrange(10**6)}"
    lines = "".join(f"{indent}{line}\n" for line in _value_chain(rng, v, t, n))
    return text[:m.start()] + lines + f"{indent}ubuf.yield %{n} : {t}\n" + text[m.end():]


def truncate(rng, text):
    if not text:
        return text
    return text[:rng.randrange(len(text))]


def stray_character(rng, text):
    i = rng.randrange(len(text) + 1)
    if rng.random() < 0.5:
        return text[:i] + text[i + 1:]
    return text[:i] + rng.choice('{}[]()"%,:=<>@#^-\n \\\u2603') + text[i:]


MUTATIONS = {f.__name__: f for f in (change_integer, change_isl_integer, edit_isl, delete_line, duplicate_line,
                                     swap_lines, swap_operands, swap_names, replace_type, replace_op, replace_word,
                                     set_capacity, retime_stage, rewrite_kernel, truncate,
                                     stray_character)}


def mutate(text: str, edits) -> str:
    for name, seed in edits:
        text = MUTATIONS[name](random.Random(seed), text)
    return text


# ------------------------------------------------------------------------------ the contract
class _Hang(Exception):
    pass


@contextlib.contextmanager
def _deadline(seconds: float):
    """Raise _Hang in the running code after ``seconds`` (a regex that backtracks, a loop over 2**60
    cycles): a hang fails the example instead of the CI job."""
    def expire(*_):
        raise _Hang

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _located(err: LoomError, text: str) -> bool:
    """A place the user can find: a line of the text, or an op, buffer, port or stage by name."""
    if err.line is not None:
        return err.filename == "<ubuf IR>" and 1 <= err.line <= text.count("\n") + 1
    return bool(err.where)


def check_outcome(fn, text: str):
    """``fn()``'s result, or None for a located LoomError; anything else (or a hang) fails with the input."""
    try:
        with _deadline(SLOW_RUN):
            return fn()
    except LoomError as err:
        assert _located(err, text), f"LoomError without a place: {err}\n--- input:\n{text}"
        return None
    except _Hang:
        raise AssertionError(f"no answer in {SLOW_RUN} s\n--- input:\n{text}") from None
    except Exception as err:  # noqa: BLE001 - this is the point: nothing else may escape
        raise AssertionError(f"{type(err).__name__} escaped (not a LoomError): {err}\n"
                             f"{''.join(traceback.format_exception(err)[-6:])}\n--- input:\n{text}") from None


def _index_box(access: str, domain: str):
    """Per buffer dimension, the (min, max) index the access map gives over the port's domain."""
    image = isl.Set(domain).apply(isl.Map(access))
    return [(image.dim_min_val(j).to_python(), image.dim_max_val(j).to_python())
            for j in range(image.dim(isl.dim_type.set))]


def assert_reads_inside_buffers(module, text: str):
    """Every read port of a simulated design reads inside its buffer (numpy would wrap a negative index)."""
    for op in module.walk():
        if not isinstance(op, BufferOp):
            continue
        extents = list(op.extents.get_values())
        for port in op.ports():
            if port.direction.data != "out":
                continue
            box = _index_box(port.access.data, port.domain.data)
            assert all(0 <= lo and hi < e for (lo, hi), e in zip(box, extents)), (
                f"port '{port.port.data}' of @{op.sym_name.data} reads {box} of extents {extents}, yet the "
                f"simulation succeeded\n--- input:\n{text}")


def _fuzz(seed: Seed, changes):
    text = mutate(seed.text, changes)
    module = check_outcome(lambda: parse_ir(text), text)
    result = check_outcome(lambda: seed.simulate(text), text)
    if result is not None:
        assert module is not None, f"simulate took IR that parse_ir refuses\n--- input:\n{text}"
        assert_reads_inside_buffers(module, text)


N_SEEDS = 5
# edits that mostly keep the IR valid, so that the simulation's own checks (read before write, capacity,
# shared slots, reads inside buffers) and the kernel evaluator see them
DEEP = ["change_isl_integer", "edit_isl", "set_capacity", "retime_stage", "rewrite_kernel", "change_integer"]
SETTINGS = settings(max_examples=45 * FUZZ_SCALE, derandomize=True, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def _edits(names):
    return st.lists(st.tuples(st.sampled_from(names), st.integers(0, 2**32)), min_size=1, max_size=3)


def test_the_seeds_simulate_as_printed():
    assert len(seeds()) == N_SEEDS
    for seed in seeds():
        seed.simulate(seed.text)


@SETTINGS
@given(st.integers(0, N_SEEDS - 1), _edits(sorted(MUTATIONS)))
def test_mutated_ir_simulates_or_is_refused_by_place(index, changes):
    _fuzz(seeds()[index], changes)


@SETTINGS
@given(st.integers(0, N_SEEDS - 1), _edits(DEEP))
def test_consistent_edits_reach_the_simulation_checks(index, changes):
    _fuzz(seeds()[index], changes)
