"""The periodic boundary conditions (mirror_image, mirror_interior, repeat_image) map a read that lies inside
the source to itself, so the CPU path drops the mapping where it drops a clamp: the middle part of a
partitioned row loop and a producer's tiles inside the image run without the modulos (a 3-D 3x3 box through
mirror_interior computed them at every pixel: 9x slower than Halide). Values against numpy's padding modes
(Halide's conditions: symmetric, reflect, wrap), at sizes where every row is an edge row too."""

import numpy as np
import pytest
from xdsl.dialects import arith, scf

import loom.frontends.pipeline as lp
from loom.jit.pipeline import compile_cpu

NUMPY_MODE = {"mirror_image": "symmetric", "mirror_interior": "reflect", "repeat_image": "wrap"}


def _box(kind, tiled):
    x, y, c, xo, yo, xi, yi = (lp.Var(n) for n in ("x", "y", "c", "xo", "yo", "xi", "yi"))
    cl = getattr(lp.BoundaryConditions, kind)(lp.ImageParam(lp.UInt16, 3, "inp"))
    box, out = lp.Func("box"), lp.Func("out")
    box[x, y, c] = sum(cl[x + dx, y + dy, c + dc] for dx in (-1, 0, 1) for dy in (-1, 0, 1) for dc in (0, 1))
    out[x, y, c] = box[x, y, c] + 1
    if tiled:
        out.tile(x, y, xo, yo, xi, yi, 8, 4)
        box.compute_at(out, xo)
    return out


def _numpy(a, kind):
    ch, h, w = a.shape
    # a 1-wide box reads its one plane (numpy's reflect refuses it)
    planes = "edge" if kind == "mirror_interior" and ch == 1 else NUMPY_MODE[kind]
    p = np.pad(np.pad(a.astype(np.int64), ((0, 1), (0, 0), (0, 0)), mode=planes), ((0, 0), (1, 1), (1, 1)),
               mode=NUMPY_MODE[kind])
    s = sum(p[dc:dc + ch, 1 + dy:1 + dy + h, 1 + dx:1 + dx + w]
            for dx in (-1, 0, 1) for dy in (-1, 0, 1) for dc in (0, 1))
    return (s + 1).astype(np.uint16)


def _modulos(region) -> int:
    return sum(op.name == "arith.remsi" for op in region.walk())


@pytest.mark.parametrize("kind, size", [("mirror_interior", (40, 6, 3)), ("repeat_image", (20, 3, 2)),
                                        ("mirror_image", (3, 5, 1))])
def test_a_root_stencil_reads_the_interior_without_the_mapping(kind, size):
    w, h, ch = size
    a = np.random.default_rng(6).integers(0, 1000, (ch, h, w)).astype(np.uint16)
    out = _box(kind, tiled=False)
    program = compile_cpu(out, {"inp": a.shape}, (w, h, ch))
    module = program.module
    parts = [op for op in module.walk() if isinstance(op, scf.ForOp) and not isinstance(op.ub.owner, arith.ConstantOp)]
    assert (w >= 16) == any(_modulos(p.body) == 0 for p in parts)
    np.testing.assert_array_equal(program({"inp": a}), _numpy(a, kind))


@pytest.mark.parametrize("kind", ["mirror_image"])
def test_a_producers_tiles_inside_the_image_read_it_without_the_mapping(kind):
    a = np.random.default_rng(7).integers(0, 1000, (2, 21, 30)).astype(np.uint16)
    out = _box(kind, tiled=True)
    program = compile_cpu(out, {"inp": a.shape}, (30, 21, 2))
    module = program.module
    branches = [op for op in module.walk() if isinstance(op, scf.IfOp)]
    assert any(_modulos(b.true_region) == 0 < _modulos(b.false_region) for b in branches)
    np.testing.assert_array_equal(program({"inp": a}), _numpy(a, kind))


def test_a_vectorized_tiles_rows_inside_the_image_read_it_without_the_mapping():
    """The output's own tiles, vectorized by 4 (an innermost loop too short to partition): each row of a tile whose
    reads lie inside runs a copy without the modulos, the others with them."""
    x, y, c, xo, yo, xi, yi = (lp.Var(n) for n in ("x", "y", "c", "xo", "yo", "xi", "yi"))
    cl = lp.BoundaryConditions.mirror_interior(lp.ImageParam(lp.UInt16, 3, "inp"))
    out = lp.Func("out")
    out[x, y, c] = sum(cl[x + dx, y + dy, c + dc] for dx in (-1, 0, 1) for dy in (-1, 0, 1) for dc in (0, 1)) + 1
    out.tile(x, y, xo, yo, xi, yi, 64, 8).vectorize(xi, 4)
    a = np.random.default_rng(8).integers(0, 1000, (2, 21, 150)).astype(np.uint16)
    program = compile_cpu(out, {"inp": a.shape}, (150, 21, 2))
    module = program.module
    branches = [op for op in module.walk() if isinstance(op, scf.IfOp)]
    assert any(_modulos(b.true_region) == 0 < _modulos(b.false_region) for b in branches)
    np.testing.assert_array_equal(program({"inp": a}), _numpy(a, "mirror_interior"))
