"""Random schedules of one pyramid-like pipeline (a pointwise stage, a 3x3 blur, a 2x2 down-sample, an up-sample
through x / 2 with min/max/clamp, an output adding them): tiles or row splits with every tail, fused and parallel
loops, vectorize, each producer inlined, at the root or at a random loop of the output within its consumers',
some stored at the root, some split with a random tail. Written once for loom and Halide (``m``); a seed's draw is
the same for both (``draw``)."""

from __future__ import annotations

import random

from tests.pipelines_cpu.user_pipelines import image, ty, vars_

TAILS = ["Auto", "RoundUp", "GuardWithIf", "ShiftInwards"]


def _build(m, r: random.Random, W, H):
    x, y = vars_(m, "x y")
    inp = m.ImageParam(ty(m, "u16"), 2, "inp")
    cl = m.BoundaryConditions.repeat_edge(inp) if r.random() < 0.5 else m.BoundaryConditions.mirror_interior(inp)
    a, b, d, u, out = (m.Func(n) for n in ("a", "b", "d", "u", "out"))
    a[x, y] = m.u32(cl[x, y]) * 3 + m.u32(cl[x + 1, y])
    b[x, y] = a[x - 1, y] + 2 * a[x, y] + a[x + 1, y + 1] + a[x, y - 1]
    d[x, y] = (b[2 * x, 2 * y] + b[2 * x + 1, 2 * y] + b[2 * x, 2 * y + 1] + b[2 * x + 1, 2 * y + 1]) / 4
    k = r.choice([0, 1, 2])
    if k == 0:
        u[x, y] = (d[x / 2, y / 2] + d[(x + 1) / 2, (y + 1) / 2]) / 2
    elif k == 1:
        u[x, y] = d[m.min(x / 2, W // 2 - 1), m.max(y / 2 - 1, 0)]
    else:
        u[x, y] = d[(x + 1) / 2, y / 2] + d[x / 2, m.clamp(y / 2 + 1, 0, H)]
    out[x, y] = b[x, y] + u[x, y] * 2
    return inp, out, {"a": a, "b": b, "d": d, "u": u}, (x, y)


def _schedule(m, r, out, funcs, xy, log):
    x, y = xy
    loops = ["x", "y"]
    V = {n: m.Var(n) for n in ("xo", "yo", "xi", "yi", "t")}
    Vx = {"x": x, "y": y, **V}
    c = r.random()
    if c < 0.6:
        fx, fy, t = r.randint(2, 9), r.randint(2, 6), r.choice(TAILS)
        out.tile(x, y, V["xo"], V["yo"], V["xi"], V["yi"], fx, fy, getattr(m.TailStrategy, t))
        log.append(f"out.tile({fx},{fy},{t})")
        loops = ["xi", "yi", "xo", "yo"]
        if r.random() < 0.3:
            out.fuse(V["xo"], V["yo"], V["t"]); loops = ["xi", "yi", "t"]; log.append("fuse(xo,yo,t)")
        if r.random() < 0.4:
            out.parallel(Vx[loops[-1]]); log.append(f"parallel({loops[-1]})")
        if r.random() < 0.3:
            out.vectorize(V["xi"]); log.append("vectorize(xi)")
    elif c < 0.8:
        f, t = r.randint(2, 8), r.choice(TAILS)
        out.split(y, V["yo"], V["yi"], f, getattr(m.TailStrategy, t))
        log.append(f"out.split(y,{f},{t})")
        loops = ["x", "yi", "yo"]
        if r.random() < 0.5:
            out.parallel(V["yo"]); log.append("parallel(yo)")
    outer_first = loops[::-1]
    consumers = {"u": ["out"], "d": ["u"], "b": ["d", "out"], "a": ["b"]}
    depth = {"out": len(outer_first)}
    inline = set()
    def eff(c):  # an inline consumer's own consumers
        return [c] if c not in inline else [e for cc in consumers[c] for e in eff(cc)]
    for name in ("u", "d", "b", "a"):
        f = funcs[name]
        limit = min(depth[c] for c0 in consumers[name] for c in eff(c0))
        if r.random() < 0.2:
            inline.add(name); log.append(f"{name} inline"); continue
        k = r.randint(0, limit)
        depth[name] = k
        if k == 0:
            f.compute_root(); log.append(f"{name}.compute_root()")
        else:
            lv = outer_first[k - 1]
            f.compute_at(out, Vx[lv]); log.append(f"{name}.compute_at(out,{lv})")
            if r.random() < 0.3:
                f.store_root(); log.append(f"{name}.store_root()")
        if r.random() < 0.4:
            fx, t = r.randint(2, 5), r.choice(TAILS)
            px, pi = m.Var("px"), m.Var("pi")
            f.split(x, px, pi, fx, getattr(m.TailStrategy, t)); log.append(f"{name}.split(x,{fx},{t})")
            if r.random() < 0.3:
                f.vectorize(pi); log.append(f"{name}.vectorize(pi)")



def draw(m, seed: int):
    """(input ImageParam, output Func, input array, size, the schedule as text) for ``seed``."""
    W, H = random.Random(seed).randint(1, 40), random.Random(seed + 1000).randint(1, 30)
    r = random.Random(seed)
    log: list[str] = []
    inp, out, funcs, xy = _build(m, r, W, H)
    _schedule(m, r, out, funcs, xy, log)
    return inp, out, image((H, W), "u16", seed), (W, H), " ".join(log)
