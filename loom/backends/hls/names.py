"""Which IR argument names can be C++ names of the generated kernel's parameters (HLS port names).

A name fails when it means something else where the generated code uses it: a C++ keyword, a macro of
the headers the C++ includes (``NAN``, ``stdout``, ``INT32_MAX``, ``M_PI`` expand anywhere), or a type,
namespace or function that the kernel body or its prototype names (``intptr_t``, ``hls``, ``ap_fixed``,
``AP_SAT``, ``sqrtf``, ``memcpy``): a parameter of that name hides it, and the C++ does not compile.
Such an argument is called ``p<k>`` instead. The testbench keeps its arrays in a namespace of their own, so
other library functions (``index``, ``remove``, ``time``) are fine as port names.
"""

from __future__ import annotations

import re

from loom.backends.c.emit_scalar import _LIBM_CALLS

CPP_KEYWORDS = frozenset("""alignas alignof and and_eq asm auto bitand bitor bool break case catch char char8_t
char16_t char32_t class compl concept const consteval constexpr constinit const_cast continue co_await co_return
co_yield decltype default delete do double dynamic_cast else enum explicit export extern false float for friend
goto if inline int long mutable namespace new noexcept not not_eq nullptr operator or or_eq private protected
public register reinterpret_cast requires return short signed sizeof static static_assert static_cast struct
switch template this thread_local throw true try typedef typeid typename union unsigned using virtual void
volatile wchar_t while xor xor_eq main""".split())

# object-like macros of <math.h>, <stdio.h>, <stdlib.h>, <stdint.h>, <string.h> (glibc) outside the families below
_MACROS = frozenset("""BIG_ENDIAN BUFSIZ BYTE_ORDER EOF EXIT_FAILURE EXIT_SUCCESS FD_SETSIZE FILENAME_MAX FOPEN_MAX
INFINITY LITTLE_ENDIAN L_ctermid L_cuserid L_tmpnam MATH_ERREXCEPT MATH_ERRNO MAXFLOAT MB_CUR_MAX NAN NFDBITS NULL
PDP_ENDIAN P_tmpdir RAND_MAX SEEK_CUR SEEK_DATA SEEK_END SEEK_HOLE SEEK_SET TMP_MAX alloca errno
math_errhandling stderr stdin stdout assert""".split())
_MACRO_FAMILIES = re.compile(r"(M_|U?INT(8|16|32|64|MAX|PTR|_FAST|_LEAST)|FP_|HUGE_VAL|SNAN|PTRDIFF_|SIG_ATOMIC_|SIZE_|"
                             r"WCHAR_|WINT_|RENAME_|AP_)\w*")

# types, namespaces and functions that generated kernels name (the C backend's math calls included)
_USED = frozenset("""std hls ap_int ap_uint ap_fixed ap_ufixed ap_q_mode ap_o_mode int8_t int16_t int32_t int64_t
uint8_t uint16_t uint32_t uint64_t intptr_t uintptr_t size_t ptrdiff_t memcpy memset isnan isinf isfinite signbit
fmin fmax fminf fmaxf abs""".split()) | {f"{name}{suffix}" for name in _LIBM_CALLS.values() for suffix in ("", "f")}

# names the emitter itself makes: locals (v12, r3, buf4), helpers (loomh_*), result pointers (out0), p<k>
_GENERATED = re.compile(r"[a-z]+[0-9]+|loom\w*|out[0-9]+|p[0-9]+")


def usable_port_name(name: str | None) -> bool:
    """May ``name`` be a parameter of the generated C++ (and so the port's name)?"""
    return (name is not None and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name) is not None
            and re.match(r"_[A-Z_]", name) is None  # reserved for the implementation (__x, _X)
            and name not in CPP_KEYWORDS and name not in _MACROS and name not in _USED
            and _MACRO_FAMILIES.fullmatch(name) is None and _GENERATED.fullmatch(name) is None)
