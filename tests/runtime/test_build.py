"""build.py: content-hash cache, LOOM_CACHE_DIR, sanitizer flags, compile
errors as LoomError, and extra sources linked with the runtime."""

import ctypes

import numpy as np
import pytest

from loom.errors import LoomError
from loom.runtime import build, memref_descriptor

DRIVER = r"""
#include "dma_runtime.h"
/* a hand-written stand-in for a generated driver: v2 Ns on one 4x4 tile */
int tiny_driver(void *a, void *b, void *c) {
  int off = write_literal(7, 0);
  off = copy_to_inbuffer_i32(2, a, off);
  off = copy_to_inbuffer_i32(2, b, off);
  dma_start_send(off, 0);
  dma_wait_send();
  dma_start_recv(16, 0);
  dma_wait_recv();
  copy_from_outbuffer_i32(2, c, 0);
  return loom_dma_error_code();
}
"""


def test_cache_dir_and_reuse(tmp_path, monkeypatch):
    monkeypatch.setenv("LOOM_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("LOOM_SANITIZE", raising=False)
    first = build.build_library()
    assert first.parent == tmp_path and first.suffix == ".so"
    stamp = first.stat().st_mtime_ns
    assert build.build_library() == first and first.stat().st_mtime_ns == stamp  # cached
    assert not list(tmp_path.glob("*.tmp.so"))  # temporary files renamed or removed


def test_sanitize_flags(monkeypatch):
    monkeypatch.setenv("LOOM_SANITIZE", "1")
    flags = build.compile_flags()
    assert "-fsanitize=address,undefined" in flags and "-O1" in flags and "-O3" not in flags
    monkeypatch.setenv("LOOM_SANITIZE", "0")
    assert "-O3" in build.compile_flags()


def test_compile_error_is_a_loom_error(tmp_path, monkeypatch):
    monkeypatch.setenv("LOOM_CACHE_DIR", str(tmp_path))
    bad = tmp_path / "bad_driver.c"
    bad.write_text("int broken( { return 0; }\n")
    with pytest.raises(LoomError, match="C compilation failed") as info:
        build.build_library([bad], name="bad")
    assert "bad_driver.c" in str(info.value)
    assert not list(tmp_path.glob("bad-*.so"))  # only the runtime it links against was built


@pytest.mark.sanitize
def test_extra_source_links_against_the_runtime(tmp_path):
    src = tmp_path / "tiny_driver.c"
    src.write_text(DRIVER)
    lib = build.load_library([src], name="tiny_driver")
    lib.tiny_driver.argtypes = [ctypes.c_void_p] * 3
    a = np.arange(16, dtype=np.int32).reshape(4, 4)
    b = (np.arange(16, dtype=np.int32) % 5 - 2).reshape(4, 4)
    c = np.zeros((4, 4), dtype=np.int32)
    descs = [memref_descriptor(x) for x in (a, b, c)]
    assert lib.loom_sim_use_model(2, 4, 0) == 0
    assert lib.dma_init(0, 0, 0, 0, 0) == 0
    assert lib.tiny_driver(*(ctypes.addressof(d) for d in descs)) == 0, lib.loom_dma_last_error()
    lib.dma_free()
    np.testing.assert_array_equal(c, a @ b)


def test_extra_headers_enter_the_cache_key(tmp_path):
    """A header of the extra sources (``depends``) that changes gives a new library, not the stale one."""
    header, src = tmp_path / "answer.h", tmp_path / "answer.c"
    src.write_text('#include "answer.h"\nint answer(void) { return ANSWER; }\n')
    answers = []
    for value in (41, 42):
        header.write_text(f"#define ANSWER {value}\n")
        path = build.build_library([src], name="answer", depends=[header])
        answers.append(ctypes.CDLL(str(path)).answer())
    assert answers == [41, 42]
