"""Build the ``@main`` wrapper that feeds numpy data to a function under
mlir-runner, and decode what it prints.

Every value crosses the boundary as raw bytes, so results are bit-exact (no
decimal printing of floats):

* each memref argument lives in a byte buffer ``memref<Pxi8>`` (P = its size
  rounded up to 8 bytes), filled from a ``memref.global`` holding the numpy
  bytes as a hex ``dense<"0x...">`` literal, then ``memref.view``-ed as the
  static typed memref and ``memref.cast`` to the parameter type;
* after the call the same bytes are viewed as ``memref<(P/8)xi64>`` and
  printed with ``printMemrefI64``; numpy reinterprets the integers as bytes.
  This covers f16/f32/f64, all integer widths, index and i1 (one byte each)
  without the runner's 6-significant-digit float printing;
* scalar results are stored into an 8-byte buffer viewed as ``memref<1xT>``
  and printed the same way.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from loom.errors import LoomError
from loom.oracle.signature import FuncSignature, MemRefType, ScalarType

ENTRY = "__loom_oracle_main"
PRINT_FN = "printMemrefI64"
_HEADER = "Unranked Memref"
_INT = re.compile(r"-?\d+")


@dataclass
class _ArrayIn:
    arg_index: int
    type: MemRefType
    array: np.ndarray  # C-contiguous, dtype the caller gave
    padded: int  # byte size of its buffer


@dataclass
class Harness:
    text: str  # ops to insert at the end of the module body
    arrays: list[_ArrayIn]
    results: tuple[ScalarType | MemRefType, ...]

    def decode(self, stdout: str) -> tuple[list[np.ndarray], list, str]:
        """Arrays after the call, scalar results, and whatever the kernel itself
        printed before our output."""
        expected = len(self.arrays) + len(self.results)
        chunks = stdout.split(_HEADER)
        if expected == 0:
            return [], [], stdout
        if len(chunks) - 1 < expected:
            raise LoomError(
                f"expected {expected} printed memrefs from mlir-runner, got {len(chunks) - 1}:\n{stdout[-2000:]}",
                where="mlir-runner",
            )
        ours = chunks[len(chunks) - expected :]
        kernel_output = _HEADER.join(chunks[: len(chunks) - expected])
        words = [_words(chunk) for chunk in ours]
        arrays = []
        for spec, raw in zip(self.arrays, words):
            data = raw.view(np.uint8)[: spec.array.nbytes].view(spec.array.dtype)
            arrays.append(data.reshape(spec.array.shape).copy())
        results = []
        for rtype, raw in zip(self.results, words[len(self.arrays) :]):
            results.append(raw.view(np.uint8)[: rtype.dtype.itemsize].view(rtype.dtype)[0])
        return arrays, results, kernel_output


def _words(chunk: str) -> np.ndarray:
    _, sep, data = chunk.partition("data =")
    if not sep:
        raise LoomError(f"cannot read mlir-runner output: {chunk[:500]}", where="mlir-runner")
    return np.array(_INT.findall(data), dtype=np.int64)


def _memref_text(shape: tuple[int, ...], elem: str) -> str:
    return "memref<" + "".join(f"{d}x" for d in shape) + elem + ">"


def _check_array(value, mtype: MemRefType, where: str) -> np.ndarray:
    if not isinstance(value, np.ndarray):
        raise LoomError(f"expected a numpy array for {mtype.text}, got {type(value).__name__}", where=where)
    want = mtype.element.dtype
    have = value.dtype
    if want.kind in "iu":
        # integers (MLIR's are signless): signed or unsigned numpy ints of the same width
        ok = have.kind in "iu" and have.itemsize == want.itemsize
    else:
        ok = have == want
    if not ok:
        raise LoomError(f"array of dtype {have} does not match element type of {mtype.text} (expected {want})", where=where)
    if mtype.shape is not None:
        if len(mtype.shape) != value.ndim or any(d is not None and d != n for d, n in zip(mtype.shape, value.shape)):
            raise LoomError(f"array of shape {value.shape} does not fit {mtype.text}", where=where)
    # (np.ascontiguousarray would turn a 0-d array into a 1-d one)
    return value if value.flags.c_contiguous else value.copy(order="C")


def _scalar_literal(value, stype: ScalarType, where: str) -> str:
    name = stype.text
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value[()]
    if name == "i1":
        if not isinstance(value, (bool, np.bool_)) and value not in (0, 1):
            raise LoomError(f"expected a bool for i1, got {value!r}", where=where)
        return "true" if value else "false"
    if stype.dtype.kind == "f":
        if not isinstance(value, (int, float, np.integer, np.floating)) or isinstance(value, (bool, np.bool_)):
            raise LoomError(f"expected a number for {name}, got {value!r}", where=where)
        bits = np.array(value, dtype=stype.dtype).view(f"u{stype.dtype.itemsize}")[()]
        return f"0x{int(bits):0{2 * stype.dtype.itemsize}X}"
    if not isinstance(value, (int, np.integer)) or isinstance(value, (bool, np.bool_)):
        raise LoomError(f"expected an integer for {name}, got {value!r}", where=where)
    value = int(value)
    bits = stype.dtype.itemsize * 8
    if name.startswith("ui"):
        lo, hi = 0, (1 << bits) - 1
    elif name.startswith("si") or name == "index":
        lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    else:  # signless: accept the signed and the unsigned reading of the bits
        lo, hi = -(1 << (bits - 1)), (1 << bits) - 1
    if not lo <= value <= hi:
        raise LoomError(f"{value} does not fit {name}", where=where)
    if name.startswith("i") and name != "index" and value >= 1 << (bits - 1):
        value -= 1 << bits  # print the signed value with the same bits
    return str(value)


def build(sig: FuncSignature, args: list, declare_print: bool) -> Harness:
    where = f"@{sig.name}"
    if len(args) != len(sig.inputs):
        raise LoomError(f"@{sig.name} takes {len(sig.inputs)} arguments, got {len(args)}", where=where)
    for i, rtype in enumerate(sig.results):
        if isinstance(rtype, MemRefType):
            raise LoomError(f"result {i} is a memref ({rtype.text}); only scalar results are supported", where=where)

    globals_, body, operands, arrays = [], [], [], []
    body.append("%c0 = arith.constant 0 : index")
    for i, (ptype, value) in enumerate(zip(sig.inputs, args)):
        arg_where = f"{where} argument {i}"
        if isinstance(ptype, ScalarType):
            literal = _scalar_literal(value, ptype, arg_where)
            typed_literal = literal if ptype.text == "i1" else f"{literal} : {ptype.text}"  # bools carry i1
            body.append(f"%s{i} = arith.constant {typed_literal}")
            operands.append(f"%s{i}")
            continue
        array = _check_array(value, ptype, arg_where)
        padded = max(8, -(-array.nbytes // 8) * 8)
        blob = array.tobytes() + bytes(padded - array.nbytes)
        buf = f"memref<{padded}xi8>"
        typed = _memref_text(array.shape, ptype.element.text)
        globals_.append(f'memref.global "private" constant @__loom_in{i} : {buf} = dense<"0x{blob.hex().upper()}">')
        body += [
            f"%b{i} = memref.alloc() {{alignment = 64 : i64}} : {buf}",
            f"%g{i} = memref.get_global @__loom_in{i} : {buf}",
            f"memref.copy %g{i}, %b{i} : {buf} to {buf}",
            f"%v{i} = memref.view %b{i}[%c0][] : {buf} to {typed}",
        ]
        if typed != ptype.text:
            body.append(f"%a{i} = memref.cast %v{i} : {typed} to {ptype.text}")
            operands.append(f"%a{i}")
        else:
            operands.append(f"%v{i}")
        arrays.append(_ArrayIn(i, ptype, array, padded))

    in_types = ", ".join(t.text for t in sig.inputs)
    out_types = ", ".join(t.text for t in sig.results)
    call = f"func.call @{sig.name}({', '.join(operands)}) : ({in_types}) -> ({out_types})"
    nres = len(sig.results)
    if nres == 1:
        body.append(f"%r = {call}")
        result_names = ["%r"]
    elif nres > 1:
        body.append(f"%r:{nres} = {call}")
        result_names = [f"%r#{j}" for j in range(nres)]
    else:
        body.append(call)
        result_names = []

    def print_bytes(buf_name: str, padded: int, tag: str) -> None:
        words = f"memref<{padded // 8}xi64>"
        body.append(f"%w{tag} = memref.view {buf_name}[%c0][] : memref<{padded}xi8> to {words}")
        body.append(f"%u{tag} = memref.cast %w{tag} : {words} to memref<*xi64>")
        body.append(f"func.call @{PRINT_FN}(%u{tag}) : (memref<*xi64>) -> ()")

    for spec in arrays:
        print_bytes(f"%b{spec.arg_index}", spec.padded, f"a{spec.arg_index}")
    for j, (rtype, rname) in enumerate(zip(sig.results, result_names)):
        body += [
            f"%rb{j} = memref.alloc() {{alignment = 8 : i64}} : memref<8xi8>",
            f"%rv{j} = memref.view %rb{j}[%c0][] : memref<8xi8> to memref<1x{rtype.text}>",
            f"memref.store {rname}, %rv{j}[%c0] : memref<1x{rtype.text}>",
        ]
        print_bytes(f"%rb{j}", 8, f"r{j}")
    body.append("return")

    lines = list(globals_)
    if declare_print:
        lines.append(f"func.func private @{PRINT_FN}(memref<*xi64>)")
    lines.append(f"func.func @{ENTRY}() {{")
    lines += ["  " + op for op in body]
    lines.append("}")
    return Harness("\n".join(lines) + "\n", arrays, sig.results)
