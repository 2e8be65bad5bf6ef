"""The core scalar table: every entry's facts agree with numpy, ctypes, C and xDSL."""

import ctypes

import numpy as np
import pytest
from xdsl.dialects.builtin import BFloat16Type, IndexType, IntegerType, Signedness, f32

from loom.core.scalars import KINDS, SCALARS, scalar, scalar_of_dtype, scalar_of_xdsl
from loom.errors import LoomError

ALL = list(SCALARS.values())


@pytest.mark.parametrize("s", ALL, ids=[s.mlir for s in ALL])
def test_entry_is_consistent(s):
    assert s.kind in KINDS
    assert s.mlir == str(s.to_xdsl())  # the spelling is what xDSL prints
    assert scalar_of_xdsl(s.to_xdsl()) is s
    if s.stored_as is None:
        # storage width: bools and values take a whole byte / their own width
        assert s.dtype.itemsize * 8 == max(s.bits, 8)
        assert ctypes.sizeof(s.ctypes_type) == s.dtype.itemsize
    if s.is_float:
        assert s.dtype.kind == "f" and s.min_value == -np.inf and s.max_value == np.inf
        return
    info = np.iinfo(s.dtype) if s.kind != "bool" else None
    if info is not None:  # the range is the dtype's range
        assert (s.min_value, s.max_value) == (int(info.min), int(info.max))
        assert s.ctype == ("u" if s.kind == "uint" else "") + ("intptr_t" if s.kind == "index" else f"int{s.bits}_t")
        assert s.utype == ("uintptr_t" if s.kind == "index" else f"uint{s.bits}_t")
        # ctypes wraps like the C type: max + 1 becomes min
        assert s.ctypes_type(s.max_value + 1).value == s.min_value
    else:
        assert (s.min_value, s.max_value, s.ctype, s.dtype) == (0, 1, "bool", np.dtype(np.bool_))


def test_signless_literal_range_accepts_both_readings():
    assert SCALARS["i8"].literal_range == (-128, 255)
    assert SCALARS["si8"].literal_range == (-128, 127)
    assert SCALARS["ui8"].literal_range == (0, 255)
    assert SCALARS["index"].literal_range == (-(2**63), 2**63 - 1)
    with pytest.raises(LoomError, match="not an integer type"):
        SCALARS["f32"].literal_range


def test_bf16_is_held_in_float32():
    bf = SCALARS["bf16"]
    assert (bf.bits, bf.kind, bf.stored_as) == (16, "float", "f32")
    assert bf.dtype == np.dtype(np.float32) and bf.ctype == "float" and bf.ctypes_type is ctypes.c_float
    assert isinstance(bf.to_xdsl(), BFloat16Type)


def test_can_represent():
    u8 = SCALARS["ui8"]
    assert u8.can_represent(255) and not u8.can_represent(256) and not u8.can_represent(-1)
    assert not u8.can_represent(1.5)
    assert SCALARS["i1"].can_represent(True) and not SCALARS["i1"].can_represent(2)
    assert SCALARS["f32"].can_represent(1.5)


def test_lookups():
    assert scalar_of_xdsl(IntegerType(8, Signedness.UNSIGNED)).mlir == "ui8"
    assert scalar_of_xdsl(IntegerType(8, Signedness.UNSIGNED), signless=True).mlir == "i8"
    assert scalar_of_xdsl(IndexType()) is SCALARS["index"]
    assert scalar_of_xdsl(f32) is SCALARS["f32"]
    assert scalar_of_dtype(np.uint16) is SCALARS["ui16"]
    assert scalar_of_dtype(np.int32) is SCALARS["i32"]
    with pytest.raises(LoomError, match="unsupported scalar type 'i7'"):
        scalar_of_xdsl(IntegerType(7))
    with pytest.raises(LoomError, match="unknown scalar type 'f8'"):
        scalar("f8")
    with pytest.raises(LoomError, match="complex64"):
        scalar_of_dtype(np.complex64)


def test_frontend_and_backend_views_share_the_table():
    from loom.backends.c.c_types import _SCALARS
    from loom.frontends.kernel.kernel_types import SCALAR_TYPES
    from loom.frontends.pipeline.types import ALL_TYPES
    from loom.oracle.signature import ELEMENT_DTYPES

    for t in SCALAR_TYPES:
        assert SCALARS[t.core.mlir] is t.core and t.dtype == t.core.dtype and t.width == t.core.bits
    for t in ALL_TYPES:
        assert SCALARS[t.core.mlir] is t.core and t.bits == t.core.bits
    for name, c in _SCALARS.items():
        assert c.core is SCALARS[name] and c.np_dtype == c.core.dtype and c.ctype == c.core.ctype
    assert "bf16" not in ELEMENT_DTYPES and ELEMENT_DTYPES["ui16"] == np.dtype(np.uint16)
