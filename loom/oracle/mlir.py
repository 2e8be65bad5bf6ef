"""Run IR we emit through upstream MLIR 22 as an independent oracle.

``verify`` parses (and so verifies) with ``mlir-opt``; ``opt`` applies passes;
``run`` executes one function with ``mlir-runner`` on numpy data and returns the
memref arguments' contents after the call plus the scalar results.

Precision: ``run`` moves all data as raw bytes (see ``loom.oracle.harness``), so
results are bit-exact; the 6-significant-digit decimal printing of
``printMemrefF32/F64`` is never used.

Tool location: ``/usr/lib/llvm-22/bin`` unless ``LOOM_MLIR_BIN`` is set
(``LOOM_MLIR_LIB`` for the runner libraries, ``LOOM_MLIR_TIMEOUT`` in seconds).
"""

from __future__ import annotations

import io
import shlex
from dataclasses import dataclass, field

import numpy as np

from loom.errors import LoomError
from loom.oracle import harness, tools
from loom.oracle.signature import find_signature, function_symbols, parse_type

# Lowers linalg/affine/scf/memref/arith/math on memrefs to the LLVM dialect.
# expand-strided-metadata must come before lower-affine (it emits affine.apply).
LOWERING = [
    "--linalg-generalize-named-ops",
    "--convert-linalg-to-loops",
    "--expand-strided-metadata",
    "--lower-affine",
    "--convert-scf-to-cf",
    "--convert-math-to-funcs",  # math.ipowi (int ** int in kernels) has no LLVM lowering: a generated function
    "--convert-math-to-llvm",
    "--convert-math-to-libm",
    "--convert-to-llvm",
    "--reconcile-unrealized-casts",
]


@dataclass
class RunResult:
    """Outcome of ``run``.

    ``memrefs``: indexed like the arguments: for each memref argument a new numpy
    array with the caller's dtype and shape holding the memory after the call;
    None at scalar arguments.
    ``results``: the function's scalar results as numpy scalars.
    ``stdout``: anything the function printed itself.
    """

    memrefs: list[np.ndarray | None] = field(default_factory=list)
    results: list = field(default_factory=list)
    stdout: str = ""

    @property
    def arrays(self) -> list[np.ndarray]:
        """Only the memref arguments' arrays, in argument order."""
        return [m for m in self.memrefs if m is not None]


def available() -> bool:
    """True when mlir-opt, mlir-runner and the runner libraries are installed."""
    return tools.available()


def _print_xdsl(module, generic: bool) -> str:
    from xdsl.printer import Printer

    stream = io.StringIO()
    Printer(stream=stream, print_generic_format=generic).print_op(module)
    return stream.getvalue() + "\n"


def to_generic_text(module) -> str:
    """An xDSL operation printed in MLIR generic form: custom-dialect ops then
    parse upstream with ``--allow-unregistered-dialect``."""
    return _print_xdsl(module, generic=True)


def _as_text(module_or_text, generic: bool = False) -> str:
    if isinstance(module_or_text, str):
        return module_or_text
    from xdsl.ir import Operation

    if isinstance(module_or_text, Operation):
        return _print_xdsl(module_or_text, generic)
    raise LoomError(
        f"expected MLIR text or an xDSL operation, got {type(module_or_text).__name__}", where="loom.oracle"
    )


def _pass_args(passes: str | list[str]) -> list[str]:
    items = shlex.split(passes) if isinstance(passes, str) else list(passes)
    return [p if p.startswith("-") else "--" + p for p in items]


def verify(module_or_text, *, allow_unregistered: bool = False) -> None:
    """Parse and verify with mlir-opt; raise LoomError carrying its diagnostics.

    With ``allow_unregistered`` an xDSL module is printed in generic form so that
    ops of our own dialects are accepted as unregistered ops."""
    opt(module_or_text, [], allow_unregistered=allow_unregistered)


def opt(module_or_text, passes: str | list[str], allow_unregistered: bool = False) -> str:
    """Apply ``passes`` with mlir-opt and return the resulting text.

    ``passes``: a string such as ``"--canonicalize --cse"`` or a list of pass
    flags; a leading ``--`` may be omitted (``["canonicalize", "cse"]``)."""
    args = _pass_args(passes)
    if allow_unregistered:
        args.append("--allow-unregistered-dialect")
    text = _as_text(module_or_text, generic=allow_unregistered)
    return tools.invoke("mlir-opt", args, text)


def _insert_before_module_end(generic_text: str, extra: str) -> str:
    """Insert ops at the end of the top-level module's body in generic text,
    whose last line closes the module region: ``}) : () -> ()``."""
    lines = generic_text.rstrip().splitlines()
    for i in range(len(lines) - 1, -1, -1):
        if lines[i].startswith("})"):
            return "\n".join(lines[:i]) + "\n" + extra + "\n".join(lines[i:]) + "\n"
    raise LoomError("cannot find the end of the top-level module in mlir-opt output", where="mlir-opt")


def run(
    module_or_text,
    func_name: str,
    args: list,
    *,
    result_types=None,
    passes: list[str] | None = None,
) -> RunResult:
    """Execute ``func_name`` with mlir-runner.

    ``args``: numpy arrays for memref parameters (dtype must match the element
    type; signed or unsigned ints of the right width for integers; bool for i1;
    int64 for index) and Python/numpy scalars for scalar parameters.
    ``result_types``: optional expected result types (MLIR spellings or numpy
    dtypes); a mismatch with the function's signature raises LoomError.
    ``passes``: lowering pipeline to use instead of ``LOWERING``.
    """
    text = _as_text(module_or_text)
    generic = tools.invoke("mlir-opt", ["--mlir-print-op-generic"], text)
    sig = find_signature(generic, func_name)
    if result_types is not None:
        _check_result_types(sig, result_types)
    declared = function_symbols(generic)
    if harness.ENTRY in declared:
        raise LoomError(f"the module already defines @{harness.ENTRY}", where=f"@{harness.ENTRY}")
    built = harness.build(sig, list(args), declare_print=harness.PRINT_FN not in declared)
    program = _insert_before_module_end(generic, built.text)
    lowered = tools.invoke("mlir-opt", list(passes or LOWERING), program)
    libs = ",".join(str(p) for p in tools.runner_libs())
    stdout = tools.invoke(
        "mlir-runner", ["-e", harness.ENTRY, "-entry-point-result=void", f"-shared-libs={libs}"], lowered
    )
    arrays, results, kernel_output = built.decode(stdout)
    memrefs: list[np.ndarray | None] = [None] * len(sig.inputs)
    for spec, array in zip(built.arrays, arrays):
        memrefs[spec.arg_index] = array
    return RunResult(memrefs, results, kernel_output)


def _check_result_types(sig, result_types) -> None:
    expected = list(result_types)
    actual = [r.text for r in sig.results]
    ok = len(expected) == len(actual)
    for want, rtype in zip(expected, sig.results):
        if isinstance(want, str):
            ok = ok and parse_type(want, f"@{sig.name} result_types").text == rtype.text
        else:
            ok = ok and np.dtype(want) == rtype.dtype
    if not ok:
        raise LoomError(f"@{sig.name} returns ({', '.join(actual)}), expected {expected}", where=f"@{sig.name}")
