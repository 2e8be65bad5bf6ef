"""Bad shapes, types and specs are LoomErrors that say what was expected."""

from __future__ import annotations

import pytest
from xdsl.builder import ImplicitBuilder
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import MemRefType, f32, i32

from loom.errors import LoomError
from loom.frontends.kernel import linalg as L


def raises(shapes, body, match, elts=None):
    elts = elts or [f32] * len(shapes)
    types = [MemRefType(e, list(s)) for e, s in zip(elts, shapes)]
    fn = func.FuncOp("kernel", (types, []))
    with pytest.raises(LoomError, match=match) as info:
        with ImplicitBuilder(fn.body) as args:
            body(*args)
    assert info.value.filename is None  # the frontend fills in the location
    return info.value


def test_matmul_inner_dimensions():
    err = raises([(4, 8), (9, 4), (4, 4)], L.matmul, "inner dimensions differ")
    assert str(err) == "matmul: A is 4x8 but B is 9x4: inner dimensions differ"


def test_matmul_output_shape():
    raises([(4, 8), (8, 3), (4, 4)], L.matmul, "C columns is 4 but B columns is 3")


def test_matmul_rank_and_type():
    raises([(4, 8, 1), (8, 3), (4, 3)], L.matmul, "A must have rank 2")
    raises([(4, 8), (8, 3), (4, 3)], L.matmul, "element types differ", elts=[f32, i32, f32])


def test_conv_output_size():
    # 7x7 input, 3x3 filter, stride 2 -> 3x3 output, not 4x4
    raises([(1, 2, 7, 7), (3, 2, 3, 3), (1, 3, 4, 4)],
           lambda i, f, o: L.conv_2d_nchw_fchw(i, f, o, strides=(2, 2)),
           r"output height is 4 but input 7, window 3, stride 2, dilation 1 give 3")


def test_conv_channels_and_filter_count():
    raises([(1, 2, 5, 5), (3, 4, 3, 3), (1, 3, 3, 3)], L.conv_2d_nchw_fchw,
           "filter channels is 4 but input channels is 2")
    raises([(1, 5, 5, 2), (3, 3, 2, 4), (1, 3, 3, 5)], L.conv_2d_nhwc_hwcf,
           "output channels is 5 but filter count is 4")


def test_conv_bad_strides():
    raises([(1, 2, 5, 5), (3, 2, 3, 3), (1, 3, 3, 3)],
           lambda i, f, o: L.conv_2d_nchw_fchw(i, f, o, strides=(0, 1)), "strides must be positive")


def test_pooling_window_too_large():
    raises([(1, 1, 3, 3), (1, 1, 1, 1)], lambda i, o: L.pooling_nchw_max(i, (4, 4), o),
           "window 4 .* does not fit in input size 3")


def test_depthwise_channels():
    raises([(1, 5, 5, 3), (2, 2, 4), (1, 4, 4, 3)], L.depthwise_conv_2d_nhwc_hwc,
           "filter channels is 4 but input channels is 3")


def test_elementwise_shape_and_type():
    raises([(3, 4), (4, 3), (3, 4)], L.add, "out is 3x4 but b is 4x3: shapes must match")
    raises([(3,), (3,)], L.exp, "needs a floating-point element type", elts=[i32, i32])
    raises([(3,)], lambda o: L.fill("zero", o), "value must be a number")
    raises([(3,)], lambda o: L.fill(1.5, o), "not an integer", elts=[i32])


def test_non_memref_argument():
    raises([(3,)], lambda o: L.copy(1.0, o), "copy: src must be a memref")


def test_einsum_errors():
    raises([(3, 4), (4, 2), (3, 2)], lambda a, b, o: L.einsum("ik,kj", a, b, out=o), "form")
    raises([(3, 4), (5, 2), (3, 2)], lambda a, b, o: L.einsum("ik,kj->ij", a, b, out=o),
           "index 'k' is 4 in input #0 but 5 in input #1")
    raises([(3, 4), (4, 2), (3, 2)], lambda a, b, o: L.einsum("ikx,kj->ij", a, b, out=o),
           "input #0 has rank 2 but 'ikx' has 3 indices")
    raises([(3, 4), (4, 2), (3, 2)], lambda a, b, o: L.einsum("ik,kj->iz", a, b, out=o),
           "output index 'z' does not appear")
    raises([(3, 4), (3,)], lambda a, o: L.einsum("ij,jk->i", a, out=o), "names 2 inputs but 1")


def test_generic_errors():
    add = lambda x, acc: arith.AddfOp(x, acc).result  # noqa: E731
    raises([(3, 4), (3,)], lambda a, o: L.generic([a], [o], ["(i, j) -> (i, j", "(i, j) -> (i)"], ["parallel"] * 2, add),
           "bad indexing map")
    raises([(3, 4), (3,)], lambda a, o: L.generic([a], [o], ["(i, j) -> (i, j) x", "(i, j) -> (i)"],
                                                  ["parallel"] * 2, add), "expected the end of the map but found .x.")
    raises([(3, 4), (3,)], lambda a, o: L.generic([a], [o], ["(i, j) -> (i, j)"], ["parallel"] * 2, add),
           "1 indexing maps for 2 operands")
    raises([(3, 4), (3,)], lambda a, o: L.generic([a], [o], ["(i, j) -> (i, j)", "(i) -> (i)"],
                                                  ["parallel", "reduction"], add),
           "has 1 dims but there are 2 iterator types")
    raises([(3, 4), (3,)], lambda a, o: L.generic([a], [o], ["(i, j) -> (i, j)", "(i, j) -> (i)"],
                                                  ["parallel", "sideways"], add),
           "'sideways' is not 'parallel' or 'reduction'")
    raises([(3, 4), (4,)], lambda a, o: L.generic([a], [o], ["(i, j) -> (i, j)", "(i, j) -> (i)"],
                                                  ["parallel", "reduction"], add),
           "invalid linalg.generic")
    raises([(3, 4), (3,)], lambda a, o: L.generic([a], [o], ["(i, j) -> (i, j)", "(i, j) -> (i)"],
                                                  ["parallel", "reduction"], lambda x, acc: (x, x)),
           "body returned 2 values for 1 outputs")
