"""harris corner detector in i16 (after the Halide-to-Hardware app).

Sobel gradients over a 3x3 window, clamped to [-180, 180]; products >> 6;
3x3 box sums >> 6; cim = det - (trace * trace >> 4); 3x3 non-maximum
suppression with threshold 1 -> 255 (corner) or 0 (the centre compared with each
neighbour, as the Halide-to-Hardware app writes it).
Input (w+6) x (h+6) u8 -> output w x h u8 (64x64 -> 58x58).
Accelerator stages: hw_input, grad_x/grad_y, lgxx/lgyy/lgxy, cim, output.
``algorithm(explicit=True)``: the same values with the Sobel and box sums written out term by term (no RDom),
the form the Halide-to-Hardware app uses for thesis Code 6.1 schedules 1 and 2.
"""

from loom.frontends.pipeline import (Func, ImageParam, IterLevel, LoopLevel, RDom, UInt8, Var, clamp, i16,
                                     select, u8)
from loom.frontends.pipeline.recipes import compute_in_tiles, schedule_app
from loom.errors import LoomError
from loom.examples.pipelines._inputs import image_inputs

HALO = 6
SOBEL_X = [[-1, 0, 1], [-2, 0, 2], [-1, 0, 1]]  # [row][col]
SOBEL_Y = [[-1, -2, -1], [0, 0, 0], [1, 2, 1]]
THRESHOLD = 1


def algorithm(explicit=False):
    x, y = Var("x"), Var("y")
    inp = ImageParam(UInt8, 2, "input")
    hw_input = Func("hw_input")
    hw_input[x, y] = i16(inp[x, y])
    kx, ky = Func("kernel_x"), Func("kernel_y")
    kx[x, y] = i16(0)
    ky[x, y] = i16(0)
    for row in range(3):
        for col in range(3):
            kx[col, row] = i16(SOBEL_X[row][col])
            ky[col, row] = i16(SOBEL_Y[row][col])
    r = RDom(0, 3, 0, 3, name="r")
    gx_raw, gy_raw = Func("grad_x_unclamp"), Func("grad_y_unclamp")
    if explicit:  # negated terms subtract (Halide's simplifier folds -a + b into b - a)
        gx_raw[x, y] = _weighted_sum(hw_input, x, y, SOBEL_X)
        gy_raw[x, y] = _weighted_sum(hw_input, x, y, SOBEL_Y)
    else:
        gx_raw[x, y] = i16(0)
        gy_raw[x, y] = i16(0)
        gx_raw[x, y] += kx[r.x, r.y] * hw_input[x + r.x, y + r.y]
        gy_raw[x, y] += ky[r.x, r.y] * hw_input[x + r.x, y + r.y]
    grad_x, grad_y = Func("grad_x"), Func("grad_y")
    grad_x[x, y] = clamp(gx_raw[x, y], -180, 180)
    grad_y[x, y] = clamp(gy_raw[x, y], -180, 180)
    lxx, lyy, lxy = Func("lxx"), Func("lyy"), Func("lxy")
    lxx[x, y] = (grad_x[x, y] * grad_x[x, y]) >> 6
    lyy[x, y] = (grad_y[x, y] * grad_y[x, y]) >> 6
    lxy[x, y] = (grad_x[x, y] * grad_y[x, y]) >> 6
    box = RDom(0, 3, 0, 3, name="box")
    sums = {}
    for name, src in (("lgxx", lxx), ("lgyy", lyy), ("lgxy", lxy)):
        f = Func(name)
        if explicit:
            f[x, y] = _weighted_sum(src, x, y, [[1] * 3] * 3)
        else:
            f[x, y] = i16(0)
            f[x, y] += src[x + box.x, y + box.y]
        sums[name] = f
    lgxx, lgyy, lgxy = (Func(n + "_n") for n in ("lgxx", "lgyy", "lgxy"))
    lgxx[x, y] = sums["lgxx"][x, y] >> 6
    lgyy[x, y] = sums["lgyy"][x, y] >> 6
    lgxy[x, y] = sums["lgxy"][x, y] >> 6
    det, trace, cim = Func("det"), Func("trace"), Func("cim")
    det[x, y] = lgxx[x, y] * lgyy[x, y] - lgxy[x, y] * lgxy[x, y]
    trace[x, y] = lgxx[x, y] + lgyy[x, y]
    cim[x, y] = det[x, y] - ((trace[x, y] * trace[x, y]) >> 4)
    c = cim[x + 1, y + 1]
    is_max = None
    for dy in range(3):
        for dx in range(3):
            if (dx, dy) != (1, 1):
                v = c > cim[x + dx, y + dy]
                is_max = v if is_max is None else is_max & v
    output = Func("output")
    output[x, y] = select(is_max & (c >= THRESHOLD), u8(255), u8(0))
    return dict(x=x, y=y, input=inp, hw_input=hw_input, kernel_x=kx, kernel_y=ky, grad_x_unclamp=gx_raw,
                grad_y_unclamp=gy_raw, grad_x=grad_x, grad_y=grad_y, lxx=lxx, lyy=lyy, lxy=lxy,
                lgxx=sums["lgxx"], lgyy=sums["lgyy"],
                lgxy=sums["lgxy"], cim=cim, output=output, r=r, box=box)


def _weighted_sum(f, x, y, weights):
    """sum of w * f[x + col, y + row] over the nonzero weights (row by row, from the first positive term, as
    Halide simplifies it): a weight of -1 subtracts, 1 adds, others multiply."""
    terms = [(w, f[x + col, y + row] if abs(w) == 1 else f[x + col, y + row] * i16(abs(w)))
             for row in range(3) for col in range(3) if (w := weights[row][col])]
    first = next(k for k, (w, _) in enumerate(terms) if w > 0)
    out = terms[first][1]
    for w, term in terms[:first] + terms[first + 1:]:
        out = out + term if w > 0 else out - term
    return out


def cpu_schedule(a, tile=(32, 32)):
    compute_in_tiles(a["output"], tile, [a[n] for n in ("grad_x", "grad_y", "cim")])


# thesis Code 6.1: buffers added schedule by schedule (Table 6.1); 0 is this app's usual accelerator schedule
BUFFERS = {0: ("hw_input", "grad_x", "grad_y", "lgxx", "lgyy", "lgxy", "cim"),
           1: ("hw_input",),  # recompute all
           2: ("hw_input", "lgxx", "lgyy", "lgxy"),  # recompute some
           3: ("hw_input", "grad_x", "grad_y", "lxx", "lyy", "lxy", "lgxx", "lgyy", "lgxy", "cim")}  # none


def buffered(sch):
    """The stages given a buffer by schedule ``sch`` of thesis Code 6.1."""
    if sch not in BUFFERS:
        raise LoomError(f"sch must be one of {sorted(BUFFERS)} (thesis Code 6.1), got {sch!r}",
                        where="harris.accel_schedule")
    return BUFFERS[sch]


def accel_schedule(a, tile=(58, 58), rate=1, sch=0):
    """The declarative schedule (thesis §3.6, Code 3.8): the same design as ``imperative_schedule``."""
    x, y, output = a["x"], a["y"], a["output"]
    cgra = IterLevel("CGRA", [(x, tile[0]), (y, tile[1])])
    output.output_rate(rate).iteration_order([cgra, IterLevel("host")]).accelerate("CGRA")
    output.create_memories([a[n] for n in buffered(sch)], output.get_looplevel("CGRA", x))


def glb_schedule(a, glb_tile, tile=(58, 58), rate=1, sch=0):
    """Thesis Code 3.8: three levels on the output and the input (fabric tile, GLB, host); returns the host level.

    ``glb_tile`` is a multiple of ``tile``: GLB tiles of that many fabric tiles."""
    x, y, output = a["x"], a["y"], a["output"]
    counts = [g // t for g, t in zip(glb_tile, tile)]
    if any(g % t for g, t in zip(glb_tile, tile)) or not all(counts):
        raise LoomError(f"the GLB tile {glb_tile} must be a multiple of the fabric tile {tile}",
                        where="harris.glb_schedule")
    cgra = IterLevel("CGRA", [(x, tile[0]), (y, tile[1])])
    glb = IterLevel("GLB", [(x, counts[0]), (y, counts[1])])
    output.output_rate(rate).iteration_order([cgra, glb, IterLevel("host")]).accelerate("GLB")
    compute_cgra, compute_glb = output.get_looplevel("CGRA", x), output.get_looplevel("GLB", x)
    output.create_memories([a[n] for n in buffered(sch) if n != "hw_input"], compute_cgra)
    a["hw_input"].output_rate(rate).stream_to_accelerator(["CGRA", "GLB", "host"],
                                                          [compute_cgra, compute_glb, LoopLevel.root()])
    return output.get_memory_level("host")


def imperative_schedule(a, tile=(58, 58), rate=1):
    """The same schedule in the original primitives (thesis Code 3.7 style)."""
    xo, yo, xi, yi = Var("xo"), Var("yo"), Var("xi"), Var("yi")
    x, output, r, box = a["x"], a["output"], a["r"], a["box"]
    output.tile(x, a["y"], xo, yo, xi, yi, tile[0], tile[1])
    output.hw_accelerate(xi, xo)
    a["hw_input"].compute_at(output, xo)
    a["grad_x"].compute_at(output, xo)
    a["grad_y"].compute_at(output, xo)
    a["grad_x_unclamp"].update().unroll(r.x).unroll(r.y)
    a["grad_y_unclamp"].update().unroll(r.x).unroll(r.y)
    a["lgxx"].compute_at(output, xo)
    a["lgyy"].compute_at(output, xo)
    a["lgxy"].compute_at(output, xo)
    a["lgxx"].update().unroll(box.x).unroll(box.y)
    a["lgyy"].update().unroll(box.x).unroll(box.y)
    a["lgxy"].update().unroll(box.x).unroll(box.y)
    a["cim"].compute_at(output, xo)
    if rate > 1:
        output.unroll(xi, rate)
        a["hw_input"].unroll(x, rate)
        a["grad_x"].unroll(x, rate)
        a["grad_y"].unroll(x, rate)
        a["lgxx"].unroll(x, rate)
        a["lgyy"].unroll(x, rate)
        a["lgxy"].unroll(x, rate)
        a["cim"].unroll(x, rate)


def build(schedule="accel", tile=(58, 58), rate=1, sch=0, glb_tile=None):
    """``sch`` 1-3: the buffering of thesis Code 6.1 (recompute all / some / none); 0: the usual schedule.
    Schedules 1 and 2 use the explicit algorithm, as the Halide-to-Hardware app does.
    ``glb_tile=(w, h)``: the three-level memory hierarchy of thesis Code 3.8 (GLB tiles of fabric tiles)."""
    a = algorithm(explicit=sch in (1, 2))
    if schedule == "accel" and glb_tile is not None:
        return glb_schedule(a, glb_tile, tile, rate, sch), a
    return schedule_app(a, schedule, cpu_schedule, accel_schedule, tile=tile, rate=rate, sch=sch)


def input_shape(size):
    w, h = size
    return (h + HALO, w + HALO)


make_inputs = image_inputs(input_shape)


def output_shape(size):
    return tuple(size)


if __name__ == "__main__":  # the design, its simulation and the CPU run, checked: ``loom pipeline harris``
    from loom.cli import main

    raise SystemExit(main(["pipeline", "harris", "--size", "58x58"]))
