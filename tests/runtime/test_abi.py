"""dma_runtime.h is the one truth of the runtime ABI: ctypes declarations are parsed from
it, and the shared library exports exactly the functions it declares."""

from __future__ import annotations

import ctypes
import shutil
import subprocess

import pytest

from loom.errors import LoomError
from loom.runtime import build
from loom.runtime.abi import header_abi, parse_header

SAMPLE = """/* a header in the subset */
#ifndef X_H
#define X_H
#include <stdint.h>
#define LOOM_API __attribute__((visibility("default")))
#ifdef __cplusplus
extern "C" {
#endif
enum e { A = 0, B = 1 };
typedef struct pair {
  int64_t first, second; /* two on one line */
  double *scale;
  uint32_t flags;
} pair;
typedef struct ops { void *ctx; int (*run)(void *ctx, int n); } ops;
LOOM_API const char *name_of(int id);
LOOM_API void fill(pair *out, const ops *table,
                   uint32_t **rows, const void *base);
int64_t count(void);
#ifdef __cplusplus
}
#endif
#endif
"""


def test_sample_header_structs_and_prototypes():
    abi = parse_header(SAMPLE, "x.h")
    pair = abi.structs["pair"]
    assert [(n, t) for n, t in pair._fields_] == [
        ("first", ctypes.c_int64), ("second", ctypes.c_int64),
        ("scale", ctypes.POINTER(ctypes.c_double)), ("flags", ctypes.c_uint32)]
    assert abi.opaque == {"ops"} and "ops" not in abi.structs
    assert sorted(abi.functions) == ["count", "fill", "name_of"]
    name_of, fill, count = abi.functions["name_of"], abi.functions["fill"], abi.functions["count"]
    assert name_of.restype is ctypes.c_char_p and name_of.argtypes == [ctypes.c_int]
    assert fill.restype is None and fill.argtypes == [
        ctypes.POINTER(pair), ctypes.c_void_p, ctypes.POINTER(ctypes.POINTER(ctypes.c_uint32)), ctypes.c_void_p]
    assert count.restype is ctypes.c_int64 and count.argtypes == [] and fill.line == 17


@pytest.mark.parametrize("decl, message", [
    ("long double g(void);", "unsupported type 'long double'"),
    ("int h(struct unknown *p);", "unknown type 'unknown'"),
    ("int k(int);", "needs a type and a name"),
    ("typedef int myint;", "unsupported typedef"),
])
def test_header_outside_the_subset_is_a_loom_error_at_its_line(decl, message):
    with pytest.raises(LoomError, match=message) as info:
        parse_header("#include <stdint.h>\n\nint f(void);\n" + decl + "\n", "h.h")
    assert (info.value.filename, info.value.line) == ("h.h", 4)


def test_generated_declarations_cover_the_python_helpers():
    abi = header_abi(build.HEADER)
    report = abi.structs["loom_timing_report"]
    assert [n for n, _ in report._fields_] == ["total_s", "host_copy_s", "host_other_s", "dma_s", "compute_s",
                                              "wait_s", "sends", "recvs", "words_sent", "words_received", "macs",
                                              "send_dma_s", "recv_dma_s", "send_stall_s", "recv_stall_s", "setup_s",
                                              "compute_stall_s"]
    assert build.TimingReport is report and build.TraceCounters is abi.structs["loom_trace_counters"]
    padded = abi.functions["copy_to_inbuffer_padded_f32"]
    assert padded.restype is ctypes.c_int
    assert padded.argtypes == [ctypes.c_int64, ctypes.c_void_p, ctypes.c_int] + [ctypes.c_int64] * 4
    assert abi.functions["loom_trace_get_counters"].argtypes == [ctypes.POINTER(build.TraceCounters)]
    assert abi.functions["loom_fake_axi_platform"].restype is ctypes.c_void_p


def _exported_functions(path) -> set[str]:
    out = subprocess.run(["nm", "-D", "--defined-only", str(path)], capture_output=True, text=True, check=True)
    return {line.split()[-1] for line in out.stdout.splitlines() if line.split()[1:2] in (["T"], ["t"], ["W"])}


@pytest.mark.skipif(shutil.which("nm") is None, reason="needs binutils nm")
def test_runtime_library_exports_exactly_the_header_api():
    abi = header_abi(build.HEADER)
    exported = _exported_functions(build.build_library())
    assert exported == set(abi.functions)
    # internal helpers of runtime_internal.h stay inside the library
    assert not {"loom_error", "loom_model_send", "loom_staging_in", "loom_timing_send"} & exported
    lib = build.runtime_library()
    for name, proto in abi.functions.items():
        fn = getattr(lib, name)
        assert fn.restype == proto.restype and list(fn.argtypes) == proto.argtypes


def test_runtime_library_is_built_and_hashed_once_per_environment(monkeypatch):
    first = build.runtime_library()
    calls, original = [], build.build_library
    monkeypatch.setattr(build, "build_library", lambda *a, **k: calls.append(a) or original(*a, **k))
    assert build.runtime_library() is first and calls == []  # no second hash of sources and object
