"""The one compile cache (loom.core.compile_cache): verified objects, $CC/$CFLAGS, and every
environment failure (cache directory, disk, compiler) as a LoomError in this process."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from tests.backends.cbackend_helpers import parse

import loom.backends.c as cbackend
from loom.core import compile_cache
from loom.backends.c import compile_module, emit_c
from loom.backends.c.compiler import build_shared_object
from loom.errors import LoomError
from loom.runtime import build as runtime_build

SCALE = """
func.func @scale(%A: memref<64xf32>, %B: memref<64xf32>, %s: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  scf.for %i = %c0 to %c64 step %c1 {
    %x = memref.load %A[%i] : memref<64xf32>
    %y = arith.mulf %x, %s : f32
    memref.store %y, %B[%i] : memref<64xf32>
  }
  return
}
"""


@pytest.fixture
def cache(monkeypatch, tmp_path):
    monkeypatch.setenv("LOOM_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(cbackend, "_LOADED", {})  # every compile_module goes to the disk cache
    return tmp_path / "cache"


def _checksum(path):
    return path.with_name(path.name + ".sha256")


def _run_scale():
    a = np.arange(64, dtype=np.float32)
    b = np.zeros_like(a)
    compile_module(parse(SCALE)).function("scale")(a, b, 2.5)
    np.testing.assert_array_equal(b, a * np.float32(2.5))


def test_object_has_a_checksum_written_after_it(cache):
    so = build_shared_object(emit_c(parse(SCALE)), False)
    assert so.parent == cache and compile_cache.verified(so)
    assert _checksum(so).read_text().strip() == compile_cache.file_digest(so)
    assert sorted(p.name for p in cache.iterdir()) == sorted([so.name, so.stem + ".c", _checksum(so).name])


@pytest.mark.sanitize
def test_truncated_object_is_rebuilt_instead_of_crashing(cache, tmp_path, monkeypatch):
    so = build_shared_object(emit_c(parse(SCALE)), False)
    size = so.stat().st_size
    with open(so, "r+b") as f:  # what a full disk or a killed writer of an older loom left behind
        f.truncate(size // 2)
    # Loading that file as such kills the process (SIGBUS) or fails in dlopen: show it in a child.
    child = subprocess.run([sys.executable, "-c", f"import ctypes; ctypes.CDLL({str(so)!r}).loom_scale"],
                           capture_output=True, text=True)
    assert child.returncode != 0
    if os.environ.get("LOOM_SANITIZE") != "1":  # ASan's handler reports the fault its own way
        assert child.returncode == -signal.SIGBUS, child.stderr[-500:]
    monkeypatch.setenv("LOOM_SANITIZE", "0")
    _run_scale()  # the cache notices the checksum mismatch, rebuilds, and the kernel works
    assert so.stat().st_size == size and compile_cache.verified(so)


@pytest.mark.parametrize("damage", ["missing checksum", "flipped byte", "garbage checksum", "missing object"])
def test_damaged_entries_are_rebuilt(cache, damage):
    source = emit_c(parse(SCALE))
    so = build_shared_object(source, False)
    good = so.read_bytes()
    if damage == "missing checksum":
        _checksum(so).unlink()
    elif damage == "flipped byte":
        data = bytearray(good)
        data[len(data) // 2] ^= 0xFF
        so.write_bytes(bytes(data))
    elif damage == "garbage checksum":
        _checksum(so).write_text("0" * 64 + "\n")
    else:
        so.unlink()
    assert not compile_cache.verified(so)
    assert build_shared_object(source, False) == so
    assert compile_cache.verified(so) and so.stat().st_size == len(good)
    _run_scale()


def test_cflags_are_appended_and_part_of_the_key(cache, monkeypatch):
    source = emit_c(parse(SCALE))
    plain = build_shared_object(source, False)
    monkeypatch.setenv("CFLAGS", "-DLOOM_TEST_FLAG=1")
    with_flag = build_shared_object(source, False)
    assert with_flag != plain and compile_cache.verified(with_flag)
    monkeypatch.setenv("CFLAGS", "-include /nonexistent/loom_cflags_probe.h")
    with pytest.raises(LoomError, match="loom_cflags_probe.h"):
        build_shared_object(source, False)


def test_cc_is_honoured_and_part_of_the_key(cache, monkeypatch):
    source = emit_c(parse(SCALE))
    default = build_shared_object(source, False)
    monkeypatch.setenv("CC", "gcc -DLOOM_VIA_CC=1")  # a command with arguments, split like a shell
    other = build_shared_object(source, False)
    assert other != default and compile_cache.verified(other)


@pytest.mark.parametrize("cc, message", [("/nonexistent/loom-cc", "cannot be run"), ("false", "does not work")])
def test_missing_or_broken_compiler_is_a_loom_error(cache, monkeypatch, cc, message):
    monkeypatch.setenv("CC", cc)
    with pytest.raises(LoomError, match=message) as info:
        compile_module(parse(SCALE))
    assert info.value.where == "$CC"
    with pytest.raises(LoomError, match=message):
        runtime_build.build_library()


def test_cache_dir_that_is_a_file_is_a_loom_error(tmp_path, monkeypatch):
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("x")
    for target in (blocker, blocker / "cache"):  # the path itself, or its parent, is a regular file
        monkeypatch.setenv("LOOM_CACHE_DIR", str(target))
        with pytest.raises(LoomError, match="cache directory .* cannot be created") as info:
            build_shared_object(emit_c(parse(SCALE)), False)
        assert info.value.where == "$LOOM_CACHE_DIR" and str(target) in info.value.message
        with pytest.raises(LoomError, match="LOOM_CACHE_DIR"):
            runtime_build.build_library()


@pytest.mark.skipif(not os.path.isdir("/sys/kernel"), reason="needs a read-only sysfs")
def test_cache_dir_on_a_read_only_file_system_is_a_loom_error(monkeypatch):
    # sysfs refuses mkdir even to root (directory permissions would not stop root)
    monkeypatch.setenv("LOOM_CACHE_DIR", "/sys/kernel/loom-cache")
    with pytest.raises(LoomError, match="cannot be created"):
        compile_cache.cache_dir()


def test_full_disk_is_a_loom_error(cache, monkeypatch):
    def full_disk(directory, name):  # writes to /dev/full fail with ENOSPC, like a full file system
        return os.open("/dev/full", os.O_WRONLY), str(directory / (name + ".full.tmp"))

    monkeypatch.setattr(compile_cache, "_temp_file", full_disk)
    with pytest.raises(LoomError, match="No space left on device") as info:
        build_shared_object(emit_c(parse(SCALE)) + "/* full */", False)
    assert info.value.where == "$LOOM_CACHE_DIR"


def test_runtime_library_goes_through_the_same_cache(cache, monkeypatch):
    monkeypatch.delenv("LOOM_SANITIZE", raising=False)
    lib = runtime_build.build_library()
    assert lib.parent == cache and lib.name.startswith("loom_runtime-") and compile_cache.verified(lib)
    with open(lib, "r+b") as f:
        f.truncate(100)
    assert runtime_build.build_library() == lib and compile_cache.verified(lib)
    script = textwrap.dedent(f"""
        from loom.runtime.build import load_library
        lib = load_library()
        assert lib.loom_model_id_from_name(b"v3") == 3
        print("ok")
    """)
    env = dict(os.environ, LOOM_CACHE_DIR=str(cache))
    child = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env)
    assert child.stdout.strip() == "ok", child.stderr[-2000:]
