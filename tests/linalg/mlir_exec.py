"""Run a module of memref functions with upstream mlir-runner on numpy inputs.

Independent oracle for the linalg builders and loop passes: the module is
lowered and executed by upstream MLIR 22, never by loom's own code.
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile

import numpy as np

LLVM = "/usr/lib/llvm-22"
MLIR_OPT = f"{LLVM}/bin/mlir-opt"
MLIR_RUNNER = f"{LLVM}/bin/mlir-runner"
RUNNER_LIBS = ",".join(
    f"{LLVM}/lib/{name}.so.22.1" for name in ("libmlir_runner_utils", "libmlir_c_runner_utils")
)
LOWER_FLAGS = [
    "--convert-linalg-to-loops", "--expand-strided-metadata", "--lower-affine",
    "--convert-scf-to-cf", "--convert-to-llvm", "--reconcile-unrealized-casts",
]

HAVE_MLIR = os.path.exists(MLIR_OPT) and os.path.exists(MLIR_RUNNER)

_ELT = {np.dtype("float32"): ("f32", "printMemrefF32"), np.dtype("int32"): ("i32", "printMemrefI32")}


def mlir_verify(text: str) -> None:
    """Parse and verify with upstream mlir-opt; raise AssertionError with its message."""
    proc = subprocess.run([MLIR_OPT], input=text, capture_output=True, text=True)
    assert proc.returncode == 0, f"mlir-opt rejected the module:\n{proc.stderr}\n{text}"


def _literal(array: np.ndarray) -> str:
    if array.dtype == np.float32:
        flat = [f"{float(x):.9e}" for x in array.ravel()]
    else:
        flat = [str(int(x)) for x in array.ravel()]
    return "dense<[" + ", ".join(flat) + "]>" if array.ndim else f"dense<{flat[0]}>"


def _memref_type(array: np.ndarray) -> str:
    elt = _ELT[array.dtype][0]
    return "memref<" + "".join(f"{d}x" for d in array.shape) + elt + ">"


def run_function(module_text: str, func_name: str, args: list[np.ndarray]) -> list[np.ndarray]:
    """Call ``func_name(*args)`` (all memrefs, written in place); return the args after."""
    body = module_text.rstrip()
    assert body.endswith("}")
    body = body[:-1]
    lines = []
    for i, a in enumerate(args):
        flat_type = f"memref<{a.size}x{_ELT[a.dtype][0]}>"
        lines.append(f'  memref.global "private" constant @__arg{i} : {flat_type} = {_literal(a.ravel())}')
    lines.append("  func.func @main() {")
    names = []
    for i, a in enumerate(args):
        flat_type = f"memref<{a.size}x{_ELT[a.dtype][0]}>"
        t = _memref_type(a)
        lines.append(f"    %g{i} = memref.get_global @__arg{i} : {flat_type}")
        lines.append(f"    %f{i} = memref.alloc() : {flat_type}")
        lines.append(f"    memref.copy %g{i}, %f{i} : {flat_type} to {flat_type}")
        shape = ", ".join(str(d) for d in a.shape)
        lines.append(f"    %a{i} = memref.expand_shape %f{i} [[{', '.join(str(k) for k in range(a.ndim))}]] "
                     f"output_shape [{shape}] : {flat_type} into {t}" if a.ndim > 1 else
                     f"    %a{i} = memref.cast %f{i} : {flat_type} to {t}")
        names.append((f"%a{i}", t))
    lines.append(f"    func.call @{func_name}({', '.join(n for n, _ in names)}) : "
                 f"({', '.join(t for _, t in names)}) -> ()")
    for i, (a, (n, t)) in enumerate(zip(args, names)):
        elt, printer = _ELT[a.dtype]
        lines.append(f"    %u{i} = memref.cast {n} : {t} to memref<*x{elt}>")
        lines.append(f"    func.call @{printer}(%u{i}) : (memref<*x{elt}>) -> ()")
    lines.append("    func.return")
    lines.append("  }")
    for elt, printer in _ELT.values():
        lines.append(f"  func.func private @{printer}(memref<*x{elt}>)")
    text = body + "\n".join(lines) + "\n}\n"
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "m.mlir")
        with open(src, "w") as f:
            f.write(text)
        lowered = subprocess.run([MLIR_OPT, *LOWER_FLAGS, src], capture_output=True, text=True)
        assert lowered.returncode == 0, f"mlir-opt lowering failed:\n{lowered.stderr}\n{text}"
        run = subprocess.run(
            [MLIR_RUNNER, "-e", "main", "-entry-point-result=void", f"-shared-libs={RUNNER_LIBS}"],
            input=lowered.stdout, capture_output=True, text=True,
        )
        assert run.returncode == 0, f"mlir-runner failed:\n{run.stderr}"
    chunks = run.stdout.split("Unranked Memref")[1:]
    assert len(chunks) == len(args), run.stdout
    results = []
    for a, chunk in zip(args, chunks):
        data = chunk.split("data =", 1)[1]
        numbers = re.findall(r"[-+]?(?:\d+\.?\d*(?:[eE][-+]?\d+)?|inf|nan)", data)
        results.append(np.array([float(x) for x in numbers], dtype=a.dtype).reshape(a.shape))
    return results
