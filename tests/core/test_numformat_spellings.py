"""Spellings of number formats a user types (project files, --format): ASCII digits only."""

import pytest

from loom.core.numformats import parse_format
from loom.errors import LoomError


@pytest.mark.parametrize("text", ["fixed<\u0668, 8>", "float<\uff15, 2>", "fixed<8, 8\u00b2>"])
def test_non_ascii_digits_are_refused(text):
    """Python's \\d matched any Unicode digit, so 'fixed<٨, 8>' read as fixed<8, 8>."""
    with pytest.raises(LoomError, match="cannot read number format"):
        parse_format(text)


@pytest.mark.parametrize("text, mlir", [("fixed< 8 , 8 >", "!base2.fixed<8, 8>"),
                                        ("float<5,2,bias=3,fn>", "!base2.float<5, 2, fn, bias = 3>"),
                                        (" e4m3fn", "!base2.float<4, 3, fn>")])
def test_spacing_and_order_variants_are_read(text, mlir):
    assert parse_format(text).mlir == mlir
