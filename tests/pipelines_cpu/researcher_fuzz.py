"""Random schedules of the researcher pipelines' 2-D stages (``researcher_pipelines.py``): the output tiled or split
by rows with a random tail, its outer loops maybe fused, parallel or reordered, its inner x vectorized or unrolled;
each producer inlined, at the root or at a loop of the output no deeper than its consumers', maybe stored at the
root (a sliding window), maybe split and vectorized or unrolled. Drawn once per seed, the same for loom and
Halide (``m``): a pipeline's Funcs are named, and the consumers of each are listed in ``GRAPHS``.
"""

from __future__ import annotations

import random

TAILS = ["Auto", "RoundUp", "GuardWithIf", "ShiftInwards"]

# producer -> its consumers (the output is "out"), producers first to last (consumers before their producers)
GRAPHS = {
    "canny_like": {"sector": ["out"], "mag": ["out"], "gx": ["mag", "sector"], "gy": ["mag", "sector"],
                   "blur": ["gx", "gy"]},
    "median3x3": {"lo": ["out"], "mid": ["out"], "hi": ["out"]},
    "gauss_separable": {"bx": ["out"]},
    "resize_bilinear": {"hz": ["out"]},
}


def schedule(m, r: random.Random, out, funcs: dict, graph: dict, log: list[str], rounding_ok: bool):
    """Schedule ``out`` and the producers in ``funcs`` (name -> Func) at random; ``rounding_ok``: the inputs
    hold the columns and rows a RoundUp of the output reads (a boundary condition)."""
    x, y = m.Var("x"), m.Var("y")
    V = {n: m.Var(n) for n in ("xo", "yo", "xi", "yi", "t")}
    Vx = {"x": x, "y": y, **V}
    tails = TAILS if rounding_ok else ["GuardWithIf", "ShiftInwards"]
    loops = ["x", "y"]
    c = r.random()
    if c < 0.55:
        fx, fy, t = r.randint(2, 9), r.randint(2, 6), r.choice(tails)
        out.tile(x, y, V["xo"], V["yo"], V["xi"], V["yi"], fx, fy, getattr(m.TailStrategy, t))
        log.append(f"out.tile({fx},{fy},{t})")
        loops = ["xi", "yi", "xo", "yo"]
        if r.random() < 0.25:
            out.reorder(V["xi"], V["yi"], V["yo"], V["xo"])
            loops = ["xi", "yi", "yo", "xo"]
            log.append("reorder(xi,yi,yo,xo)")
        elif r.random() < 0.3:
            out.fuse(V["xo"], V["yo"], V["t"])
            loops = ["xi", "yi", "t"]
            log.append("fuse(xo,yo,t)")
        if r.random() < 0.4:
            out.parallel(Vx[loops[-1]])
            log.append(f"parallel({loops[-1]})")
        k = r.random()
        if k < 0.3:
            out.vectorize(V["xi"])
            log.append("vectorize(xi)")
        elif k < 0.5:
            out.unroll(V["xi"])
            log.append("unroll(xi)")
    elif c < 0.8:
        f, t = r.randint(2, 8), r.choice(tails)
        out.split(y, V["yo"], V["yi"], f, getattr(m.TailStrategy, t))
        log.append(f"out.split(y,{f},{t})")
        loops = ["x", "yi", "yo"]
        if r.random() < 0.5:
            out.parallel(V["yo"])
            log.append("parallel(yo)")
    outer_first = loops[::-1]
    depth = {"out": len(outer_first)}
    inline: set[str] = set()

    def eff(name):  # an inlined consumer's own consumers
        return [name] if name not in inline else [e for cc in graph[name] for e in eff(cc)]

    for name in graph:
        f = funcs[name]
        limit = min(depth[c] for c0 in graph[name] for c in eff(c0))
        if r.random() < 0.2:
            inline.add(name)
            log.append(f"{name} inline")
            continue
        k = r.randint(0, limit)
        depth[name] = k
        if k == 0:
            f.compute_root()
            log.append(f"{name}.compute_root()")
        else:
            lv = outer_first[k - 1]
            f.compute_at(out, Vx[lv])
            log.append(f"{name}.compute_at(out,{lv})")
            if r.random() < 0.3 and "parallel" not in " ".join(log):
                f.store_root()
                log.append(f"{name}.store_root()")
        if r.random() < 0.4:
            fx, t = r.randint(2, 5), r.choice(["GuardWithIf", "ShiftInwards"])
            px, pi = m.Var("px"), m.Var("pi")
            f.split(x, px, pi, fx, getattr(m.TailStrategy, t))
            log.append(f"{name}.split(x,{fx},{t})")
            if r.random() < 0.4:
                f.vectorize(pi) if r.random() < 0.5 else f.unroll(pi)
                log.append(f"{name}.vec/unroll(pi)")


def draw(m, name: str, seed: int):
    """(out, inputs, params, size, the schedule as text) of pipeline ``name`` under seed ``seed``'s schedule."""
    from tests.pipelines_cpu.researcher_pipelines import PIPELINES
    r = random.Random(seed)
    W, H = r.randint(1, 30), r.randint(1, 20)
    log: list[str] = [f"{W}x{H}"]

    def sched(m, out, funcs):
        schedule(m, r, out, funcs, GRAPHS[name], log, rounding_ok=name != "resize_bilinear")
    out, inputs, params, size = PIPELINES[name][0](m, W, H, seed % 7, sched)
    return out, inputs, params, size, " ".join(log)
