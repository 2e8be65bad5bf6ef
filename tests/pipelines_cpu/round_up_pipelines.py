"""Pipelines with a RoundUp split on a Func computed inside a loop, written once for loom and Halide (``m``):
shared by the Halide comparison and the sanitizer test. Layout: numpy (H, W) is (x = W, y = H)."""

import numpy as np


def round_up_inside(m, case: str, tail: str, fx: int, fy: int, hl=None):
    """out tiled 5 x 4 with ``tail``; p (a 2-point stencil of q, itself of the input) computed inside out's
    tiles with RoundUp splits by ``fx`` / ``fy``; ``case`` says where p and q are computed."""
    t = m.TailStrategy
    x, y, xo, yo, xi, yi, po, pi, qo, qi = (m.Var(n) for n in "x y xo yo xi yi po pi qo qi".split())
    inp = m.ImageParam(hl.UInt(8) if hl is not None else m.UInt8, 2, "inp")
    q, p, out = m.Func("q"), m.Func("p"), m.Func("out")
    q[x, y] = m.u16(inp[x, y]) * 3
    p[x, y] = q[x, y] + q[x + 1, y + 1] + 1
    out[x, y] = p[x, y] + p[x + 2, y] + p[x, y + 1]
    out.tile(x, y, xo, yo, xi, yi, 5, 4, getattr(t, tail))
    at = {"xo": xo, "yo": yo, "xi": xi}
    if case in at:  # q inlined into p: p's extra points read the input
        p.compute_at(out, at[case]).split(x, po, pi, fx, t.RoundUp)
    elif case == "tile_xo":  # 2-D rounding; q beside p, so computed only where p's points before rounding read
        p.compute_at(out, xo).tile(x, y, po, qo, pi, qi, fx, fy, t.RoundUp)
        q.compute_at(out, xo)
    elif case == "q_inside_p":  # q computed per row of p's rounded loops, itself rounded
        p.compute_at(out, xo).split(y, qo, qi, fy, t.RoundUp)
        q.compute_at(p, qi).split(x, po, pi, fx, t.RoundUp)
    elif case == "q_root":  # q at the root: its storage grows to what p's extra rows read, not its computation
        p.compute_at(out, yo).split(y, po, pi, fy, t.RoundUp)
        q.compute_root()
    elif case == "parallel":
        out.parallel(yo)
        p.compute_at(out, xo).split(x, po, pi, fx, t.RoundUp)
    return inp, out


def numpy_reference(image, w, h):
    """out over (w, h); values stay below 2 ** 16."""
    q = image.astype(np.uint16) * 3
    p = q[:-1, :-1] + q[1:, 1:] + 1
    return (p[:h, :w] + p[:h, 2:w + 2] + p[1:h + 1, :w]).astype(np.uint16)

