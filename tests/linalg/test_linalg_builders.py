"""Each linalg builder: build a func, verify (xDSL + upstream mlir-opt), lower with
lower_to_c, execute with upstream mlir-runner and compare with numpy."""

from __future__ import annotations

import numpy as np
import pytest
from tests.linalg.mlir_exec import HAVE_MLIR, mlir_verify, run_function
from xdsl.builder import ImplicitBuilder
from xdsl.dialects import func
from xdsl.dialects.builtin import MemRefType, ModuleOp, f32, i32

from loom.frontends.kernel import linalg as L
from loom.passes import lower_to_c

pytestmark = pytest.mark.skipif(not HAVE_MLIR, reason="needs mlir-22-tools")
C_DIALECTS = {"builtin", "func", "scf", "affine", "memref", "arith", "math"}


def build(shapes, body, elt=f32):
    types = [MemRefType(elt, list(s)) for s in shapes]
    fn = func.FuncOp("kernel", (types, []))
    with ImplicitBuilder(fn.body) as args:
        body(*args)
        func.ReturnOp()
    module = ModuleOp([fn])
    module.verify()
    return module


def check(shapes, body, reference, *, elt=f32, positive=False, seed=0):
    """Build, verify upstream, lower, run; compare every argument after the call
    with ``reference(*inputs)`` (which returns the expected arguments after)."""
    module = build(shapes, body, elt)
    mlir_verify(str(module))
    lowered = lower_to_c(module)
    assert {op.name.split(".")[0] for op in lowered.walk()} <= C_DIALECTS
    assert "linalg" in str(module) and "linalg" not in str(lowered)
    rng = np.random.default_rng(seed)
    if elt == f32:
        args = [rng.standard_normal(s).astype(np.float32) for s in shapes]
        if positive:
            args = [np.abs(a) + np.float32(0.5) for a in args]
    else:
        args = [rng.integers(-9, 10, size=s).astype(np.int32) for s in shapes]
    expected = reference(*[a.astype(np.float64) if elt == f32 else a.copy() for a in args])
    got = run_function(str(lowered), "kernel", args)
    for e, g in zip(expected, got):
        np.testing.assert_allclose(g, e, rtol=2e-5, atol=2e-5)
    return module


def conv_nchw(I, F, stride, dil):
    n, c, h, w = I.shape
    f, _, kh, kw = F.shape
    oh = (h - dil[0] * (kh - 1) - 1) // stride[0] + 1
    ow = (w - dil[1] * (kw - 1) - 1) // stride[1] + 1
    out = np.zeros((n, f, oh, ow))
    for y in range(kh):
        for x in range(kw):
            patch = I[:, :, y * dil[0]: y * dil[0] + stride[0] * (oh - 1) + 1: stride[0],
                      x * dil[1]: x * dil[1] + stride[1] * (ow - 1) + 1: stride[1]]
            out += np.einsum("nchw,fc->nfhw", patch, F[:, :, y, x])
    return out


def windows_nchw(I, k, stride, dil, oh, ow):
    """All window taps: array (kh*kw, n, c, oh, ow)."""
    taps = []
    for y in range(k[0]):
        for x in range(k[1]):
            taps.append(I[:, :, y * dil[0]: y * dil[0] + stride[0] * (oh - 1) + 1: stride[0],
                          x * dil[1]: x * dil[1] + stride[1] * (ow - 1) + 1: stride[1]])
    return np.stack(taps)


def test_matmul():
    check([(4, 8), (8, 3), (4, 3)], L.matmul, lambda a, b, c: [a, b, c + a @ b])


def test_matmul_i32():
    check([(3, 5), (5, 2), (3, 2)], L.matmul, lambda a, b, c: [a, b, c + a @ b], elt=i32)


def test_batch_matmul():
    check([(2, 3, 4), (2, 4, 5), (2, 3, 5)], L.batch_matmul,
          lambda a, b, c: [a, b, c + np.einsum("bik,bkj->bij", a, b)])


@pytest.mark.parametrize("stride,dil", [((1, 1), (1, 1)), ((2, 1), (1, 2))])
def test_conv_2d_nchw_fchw(stride, dil):
    h, w, kh, kw = 7, 8, 3, 2
    oh = (h - dil[0] * (kh - 1) - 1) // stride[0] + 1
    ow = (w - dil[1] * (kw - 1) - 1) // stride[1] + 1
    check([(1, 2, h, w), (3, 2, kh, kw), (1, 3, oh, ow)],
          lambda i, f, o: L.conv_2d_nchw_fchw(i, f, o, strides=stride, dilations=dil),
          lambda i, f, o: [i, f, o + conv_nchw(i, f, stride, dil)])


def test_conv_2d_nhwc_hwcf_strided():
    stride = (2, 2)
    check([(1, 7, 7, 2), (3, 3, 2, 4), (1, 3, 3, 4)],
          lambda i, f, o: L.conv_2d_nhwc_hwcf(i, f, o, strides=stride),
          lambda i, f, o: [i, f, o + conv_nchw(i.transpose(0, 3, 1, 2), f.transpose(3, 2, 0, 1),
                                               stride, (1, 1)).transpose(0, 2, 3, 1)])


def test_depthwise_conv_2d_nhwc_hwc():
    stride = (1, 2)
    def ref(i, f, o):
        n, h, w, c = i.shape
        out = o.copy()
        for ch in range(c):
            one = conv_nchw(i[..., ch][:, None], f[:, :, ch][None, None], stride, (1, 1))
            out[..., ch] += one[:, 0]
        return [i, f, out]
    check([(1, 5, 6, 3), (2, 2, 3), (1, 4, 3, 3)],
          lambda i, f, o: L.depthwise_conv_2d_nhwc_hwc(i, f, o, strides=stride), ref)


@pytest.mark.parametrize("layout,kind", [("nchw", "max"), ("nchw", "sum"), ("nhwc", "max"), ("nhwc", "sum")])
def test_pooling(layout, kind):
    builder = getattr(L, f"pooling_{layout}_{kind}")
    stride, k = (2, 1), (2, 3)
    in_nchw, out_nchw = (1, 2, 7, 6), (1, 2, 3, 4)
    to = (lambda s: s) if layout == "nchw" else (lambda s: (s[0], s[2], s[3], s[1]))
    fix = (lambda a: a) if layout == "nchw" else (lambda a: a.transpose(0, 3, 1, 2))
    unfix = (lambda a: a) if layout == "nchw" else (lambda a: a.transpose(0, 2, 3, 1))

    def ref(i, o):
        taps = windows_nchw(fix(i), k, stride, (1, 1), 3, 4)
        if kind == "max":  # accumulates into o's initial values, like MLIR
            return [i, unfix(np.maximum(fix(o), taps.max(axis=0)))]
        return [i, unfix(fix(o) + taps.sum(axis=0))]

    check([to(in_nchw), to(out_nchw)], lambda i, o: builder(i, k, o, strides=stride), ref)


def test_fill_then_max_pooling():
    def body(i, o):
        L.fill(-1e30, o)
        L.pooling_nchw_max(i, (2, 2), o, strides=(2, 2))
    check([(1, 1, 4, 4), (1, 1, 2, 2)], body,
          lambda i, o: [i, windows_nchw(i, (2, 2), (2, 2), (1, 1), 2, 2).max(axis=0)])


def test_fill_and_copy():
    def body(a, b, c):
        L.fill(2.5, b)
        L.copy(a, c)
    check([(3, 4), (2, 2), (3, 4)], body, lambda a, b, c: [a, np.full((2, 2), 2.5), a])


BINARY = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide,
          "max": np.maximum, "min": np.minimum}


@pytest.mark.parametrize("name", sorted(BINARY))
def test_elementwise_binary(name):
    check([(3, 4), (3, 4), (3, 4)], getattr(L, name),
          lambda a, b, o: [a, b, BINARY[name](a, b)], positive=(name == "div"))


def test_elementwise_with_python_scalar():
    # out = a * 3 + scalar broadcast via linalg.generic with a "() " map
    def body(a, o, t):
        L.mul(a, 3.0, t)
        L.sub(2, t, o)
    check([(2, 5), (2, 5), (2, 5)], body, lambda a, o, t: [a, 2 - 3 * a, 3 * a])


def test_elementwise_i32():
    check([(4,), (4,), (4,)], L.sub, lambda a, b, o: [a, b, a - b], elt=i32)


UNARY = {"exp": np.exp, "log": np.log, "sqrt": np.sqrt, "abs": np.abs, "neg": np.negative}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_elementwise_unary(name):
    positive = name in ("log", "sqrt")
    check([(2, 3), (2, 3)], getattr(L, name), lambda a, o: [a, UNARY[name](a)], positive=positive)


def test_generic_with_scalar_input():
    from xdsl.dialects import arith

    def body(a, o):
        L.generic([a, 0.5], [o], ["(i, j) -> (j, i)", "(i, j) -> ()", "(i, j) -> (i)"],
                  ["parallel", "reduction"],
                  lambda x, s, acc: arith.AddfOp(acc, arith.MulfOp(x, s).result).result)
    # o[i] += sum_j 0.5 * a[j, i]
    check([(4, 3), (3,)], body, lambda a, o: [a, o + 0.5 * a.sum(axis=0)])


@pytest.mark.parametrize("spec,shapes,ref", [
    ("ik,kj->ij", [(3, 4), (4, 2), (3, 2)], lambda a, b, o: [a, b, o + a @ b]),
    ("ij->ji", [(2, 3), (3, 2)], lambda a, o: [a, o + a.T]),
    ("bij,bj->bi", [(2, 3, 4), (2, 4), (2, 3)], lambda a, b, o: [a, b, o + np.einsum("bij,bj->bi", a, b)]),
    ("ii->i", [(3, 3), (3,)], lambda a, o: [a, o + np.diag(a)]),
    ("i,j,k->ijk", [(2,), (3,), (2,), (2, 3, 2)],
     lambda a, b, c, o: [a, b, c, o + np.einsum("i,j,k->ijk", a, b, c)]),
])
def test_einsum(spec, shapes, ref):
    check(shapes, lambda *args: L.einsum(spec, *args[:-1], out=args[-1]), ref)


def test_intrinsic_marker():
    for name in L.__all__:
        assert getattr(getattr(L, name), "__loom_intrinsic__", False) is True, name


@pytest.mark.parametrize("name,body,ref", [
    ("neg", L.neg, lambda a, o: [a, -a]),
    ("abs", L.abs, lambda a, o: [a, np.abs(a)]),
    ("max-scalar", lambda a, o: L.max(a, 2, o), lambda a, o: [a, np.maximum(a, 2)]),
    ("div-scalar", lambda a, o: L.div(a, 3, o), lambda a, o: [a, np.trunc(a / 3)]),  # divsi truncates
])
def test_elementwise_i32_generic(name, body, ref):
    check([(2, 4), (2, 4)], body, ref, elt=i32)
