"""Shape of the emitted C (static facts as constants) and the compile cache."""

from __future__ import annotations

import os
import re
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from tests.backends.cbackend_helpers import parse, sanitizer_preload

import loom.backends.c as cbackend
from loom.backends.c import compile_module, emit_c
from loom.backends.c.compiler import build_shared_object, compile_flags, sanitize_requested

COPY = """
func.func @copy_static(%A: memref<16x20xf32>, %B: memref<16x20xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c20 = arith.constant 20 : index
  scf.for %i = %c0 to %c16 step %c1 {
    scf.for %j = %c0 to %c20 step %c1 {
      %x = memref.load %A[%i, %j] : memref<16x20xf32>
      memref.store %x, %B[%i, %j] : memref<16x20xf32>
    }
  }
  return
}
func.func @copy_dynamic(%A: memref<?x?xf32>, %B: memref<?x?xf32, strided<[?, ?], offset: ?>>) {
  %c0 = arith.constant 0 : index
  %x = memref.load %A[%c0, %c0] : memref<?x?xf32>
  memref.store %x, %B[%c0, %c0] : memref<?x?xf32, strided<[?, ?], offset: ?>>
  return
}
"""


def _function_text(source: str, name: str) -> str:
    start = source.index(f"void loom_{name}(", source.index(f"loom_{name}(") + 1)
    return source[start : source.index("\n}\n", start)]


def test_static_shapes_become_constants_not_descriptor_loads():
    source = emit_c(parse(COPY))
    static = _function_text(source, "copy_static")
    assert "->sizes" not in static and "->strides" not in static and "->offset" not in static
    assert re.search(r"\* 20\) \+ ", static), static
    dynamic = _function_text(source, "copy_dynamic")
    assert "p0->sizes[0]" in dynamic and "p0->strides[0]" in dynamic
    assert "p1->strides[1]" in dynamic and "p1->offset" in dynamic
    assert "restrict" not in source  # arguments may alias


def test_sanitize_follows_environment(monkeypatch):
    monkeypatch.setenv("LOOM_SANITIZE", "1")
    assert "-fsanitize=address,undefined" in compile_flags(sanitize_requested(None))
    monkeypatch.setenv("LOOM_SANITIZE", "0")
    flags = compile_flags(sanitize_requested(None))
    assert "-O3" in flags and not any("sanitize" in f for f in flags)
    monkeypatch.setenv("LOOM_CFLAGS", "-march=native -DX=1")
    assert compile_flags(False)[-2:] == ["-march=native", "-DX=1"]


def test_disk_cache_reused_and_in_process_cache_is_fast(monkeypatch, tmp_path):
    monkeypatch.setenv("LOOM_CACHE_DIR", str(tmp_path))
    module = parse(COPY)
    first = compile_module(module)
    assert first.so_path.parent == tmp_path and first.so_path.exists()
    assert first.so_path.with_suffix(".c").read_text() == first.c_source
    stamp = first.so_path.stat().st_mtime_ns
    monkeypatch.setattr(cbackend, "_LOADED", {})  # a fresh process: only the disk cache remains
    second = compile_module(module)
    assert second.so_path == first.so_path and second.so_path.stat().st_mtime_ns == stamp
    start = time.perf_counter()
    third = compile_module(module)
    assert time.perf_counter() - start < 0.02
    assert third is second
    a = np.arange(320, dtype=np.float32).reshape(16, 20)
    b = np.zeros_like(a)
    third.function("copy_static")(a, b)
    np.testing.assert_array_equal(a, b)


def test_concurrent_compiles_of_the_same_source(monkeypatch, tmp_path):
    monkeypatch.setenv("LOOM_CACHE_DIR", str(tmp_path))
    source = emit_c(parse(COPY)) + "\n/* concurrency test */\n"
    with ThreadPoolExecutor(4) as pool:
        paths = list(pool.map(lambda _: build_shared_object(source, False), range(4)))
    assert len(set(paths)) == 1 and paths[0].exists()
    leftovers = [p for p in os.listdir(tmp_path) if p.endswith(".tmp")]
    assert leftovers == []


@pytest.mark.sanitize
def test_emitted_source_compiles_standalone_as_c99(tmp_path):
    """The C text is plain C99: gcc -Wall -pedantic accepts it without warnings about the language level."""
    import subprocess

    path = tmp_path / "k.c"
    path.write_text(emit_c(parse(COPY)))
    proc = subprocess.run(
        [os.environ.get("CC", "cc"), "-std=c99", "-pedantic", "-Werror=pedantic", "-c", str(path), "-o", str(tmp_path / "k.o")],
        capture_output=True, text=True,
    )
    assert proc.returncode == 0, proc.stderr


OUT_OF_BOUNDS = """
func.func @oob(%A: memref<?xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %len = memref.dim %A, %c0 : memref<?xf32>
  %x = memref.load %A[%len] : memref<?xf32>
  return %x : f32
}
"""

_OOB_SCRIPT = f'''
import numpy as np
from tests.backends.cbackend_helpers import build
build({OUT_OF_BOUNDS!r}).function("oob")(np.ones(8, np.float32))
'''


def test_sanitize_mode_catches_out_of_bounds_access(tmp_path):
    """An object built in sanitize mode reports a heap overflow (run in a child with the ASan runtime preloaded)."""
    import subprocess
    import sys

    preload = sanitizer_preload(os.environ.get("CC", "gcc"))
    env = dict(os.environ, LOOM_SANITIZE="1", LD_PRELOAD=preload, ASAN_OPTIONS="detect_leaks=0",
               LOOM_CACHE_DIR=os.environ.get("LOOM_CACHE_DIR", str(tmp_path)))
    repo_root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [repo_root, env.get("PYTHONPATH")]))
    proc = subprocess.run([sys.executable, "-c", _OOB_SCRIPT], env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0
    assert "heap-buffer-overflow" in proc.stderr, proc.stderr[-2000:]


def test_gcc_builds_without_tree_vrp_and_other_compilers_without_the_flag(monkeypatch):
    """gcc 12.2's value-range propagation dropped every output store of two generated pipelines
    (tests/streaming/test_streaming_fuzz_rates.py): loom turns it off for gcc only, never in the sanitizer set."""
    from loom.backends.c import compiler as c_compiler
    from loom.core import compile_cache

    for ident, has in (("gcc (Debian 12.2.0-14) 12.2.0\nCopyright (C) 2022 Free Software Foundation, Inc.", True),
                       ("Debian clang version 19.1.7\nTarget: x86_64-pc-linux-gnu", False)):
        monkeypatch.setattr(compile_cache, "compiler_identity", lambda cc, ident=ident: ident)
        assert ("-fno-tree-vrp" in compile_flags(False)) == has
        assert "-fno-tree-vrp" not in compile_flags(True)
    assert c_compiler.is_gcc() is False  # the patched identity above is clang's
