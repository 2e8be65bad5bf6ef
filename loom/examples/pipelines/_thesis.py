"""The thesis's evaluation designs and published figures (Setter 2023, Tables 6.1 and 6.5-6.7).

``TABLE_6_1``: harris with the three buffering schedules of Code 6.1 on a 64x64 input (58x58 output).
``TABLE_6_7``: per thesis app, the configuration of Table 6.5 (tile = output tile per invocation, rate =
output pixels per cycle; the PDF extraction of Table 6.5 is garbled, the readings used are these) and
the published Table 6.6 / 6.7 figures. ``app`` names the loom app that stands for it (``None``: not
reproduced here; ``why`` says why). ``thesis_design(row)`` builds and schedules the loom design with
kernel latencies from the Amber PE table (``kernel_netlist.AMBER``). ``HALIDE_TO_HARDWARE``: the
schedules the thesis ran for all ten rows (Halide-to-Hardware, branch compute_share: gaussian, cascade,
harris_color, unsharp, up_sample and camera_pipeline_2x2 schedule 3, pyramid_blur schedule 0, gemm,
resnet_output_stationary and mobilenet_output_stationary), written in loom, whose Table 6.6 kernels and memories
(``report.clockwork_counts``) are the thesis's and whose value simulation is bit-exact
(tests/streaming/test_streaming_thesis_schedules.py). ``REFUSED``: thesis schedules written in loom that loom
refuses (none now); ``NOT_WRITTEN``: those not written yet (none now).
"""

from __future__ import annotations

from loom.examples.pipelines import load_app

TABLE_6_1 = {  # schedule -> (sch of harris.build, PEs, MEMs, cycles)
    "sch1: recompute all": (1, 769, 3, 4097),
    "sch2: recompute some": (2, 145, 5, 4103),
    "sch3: no recompute": (3, 83, 5, 4146),
}
TABLE_6_1_SIZE = (58, 58)

TABLE_6_7 = {
    "gaussian": dict(app="gaussian", tile=(992, 799), build=dict(rate=16), kernels=112, memories=7, mem_bytes=252,
                     glb_kb=96.75, pe_use=0.79, mem_use=0.24, occupancy=0.982, latency=50463),
    "cascade": dict(app="cascade", tile=(600, 799), build=dict(rate=12), kernels=120, memories=9, mem_bytes=204,
                    glb_kb=78.03, pe_use=0.94, mem_use=0.36, occupancy=0.957, latency=41755),
    "upsample": dict(app="upsample", tile=(600, 400), build=dict(mode="nearest"), kernels=42, memories=6, mem_bytes=604,
                     glb_kb=117.19, pe_use=0.0, mem_use=0.05, occupancy=None, latency=6354),
    "harris": dict(app="harris", tile=(296, 319), build=dict(rate=4, sch=3), kernels=92, memories=15, mem_bytes=300,
                   glb_kb=46.11, pe_use=0.91, mem_use=0.30, occupancy=0.956, latency=24700),
    "unsharp": dict(app="unsharp", tile=(378, 319), build=dict(rate=3), kernels=54, memories=10, mem_bytes=508,
                    glb_kb=78.50, pe_use=0.78, mem_use=0.23, occupancy=0.966, latency=41601),
    "camera": dict(app="camera_pipeline", tile=(496, 368), build=dict(rate=4), kernels=84, memories=21,
                   mem_bytes=500, glb_kb=89.13, pe_use=0.78, mem_use=0.20, occupancy=0.959, latency=47564),
    "gaussian pyramid": dict(app="gaussian_pyramid", tile=(8, 8), build={}, kernels=5, memories=6, mem_bytes=260,
                             glb_kb=8.00, pe_use=0.08, mem_use=0.03, occupancy=0.25, latency=16976),
    # The DNN rows and gemm: one dnn_conv invocation computes a spatial output tile for one output-channel tile
    # (the output rate, in space) with every input channel tile in time (ci_tile per cycle, taps in time too);
    # ``invocations`` = spatial tiles x output-channel tiles, run back to back, so the layer's latency and ideal
    # cycles are the invocation's times that. Readings of the garbled Table 6.5, each fixed by the thesis's own
    # occupancy x latency = ideal cycles = MACs / (rate x ci_tile) MACs per cycle. The stride-2 rows fill their
    # input memory at 5 pixels per step (dnn_conv.fast_input_rate), so they are compute bound:
    "gemm": dict(app="dnn_conv", tile=(512, 1), build=dict(k=1, stride=1, ci=512, co=8, ci_tile=8), invocations=64,
                 why="512x512x512 as a 1x1 layer: A streams as a 512x1 image of 512 channels, B is the weights, "
                 "8 output columns per invocation (rate 8 x 8 channels = 64 MACs/cycle, 512^3/64 = 2,097,152 "
                 "ideal cycles, as the thesis's 2,162,688 - 65,536); B is kernel constants, u8 outputs, not "
                 "loom's u32 gemm app",
                 kernels=40, memories=6, mem_bytes=260, glb_kb=64.00, pe_use=0.35, mem_use=0.63, occupancy=0.970,
                 latency=2162688),
    "resnet conv3_1": dict(app="dnn_conv", tile=(14, 14), build=dict(k=3, stride=2, ci=64, co=8, ci_tile=8),
                           invocations=2 * 2 * 16,
                           why="3x3 stride 2, 56x56x64 -> 28x28x128; Table 6.5's 28x28 is the input tile (14x14 "
                           "outputs), 2x2 spatial x 16 output-channel tiles of 8, the 8 input-channel tiles in time: "
                           "28*28*128*64*9 / 64 = 903,168 ideal cycles = 93.4% of 967,160",
                           kernels=28, memories=9, mem_bytes=1800, glb_kb=24.50, pe_use=0.69, mem_use=0.19,
                           occupancy=0.934, latency=967160),
    "unet conv3_i0": dict(app="dnn_conv", tile=(28, 28), build=dict(k=3, stride=1, ci=128, co=8, ci_tile=8),
                          invocations=5 * 5 * 32,
                          why="3x3 stride 1, 140x140x128 -> 140x140x256 (the OCR's 5x5x16x22 / 3x3x10x32 are "
                          "split rows; only 256 output channels, 32 tiles of 8, fit): 140*140*128*256*9 / 64 = "
                          "90,316,800 ideal cycles = 83.46% of 108,210,328",
                          kernels=22, memories=9, mem_bytes=1568, glb_kb=76.56, pe_use=0.35, mem_use=0.13,
                          occupancy=0.835, latency=108210328),
    "jitnet enc2_c": dict(app="dnn_conv", tile=(10, 15), build=dict(k=3, stride=2, ci=64, co=16, ci_tile=8),
                          invocations=8 * 3 * 4,
                          why="3x3 stride 2, 160x90x64 -> 80x45x64, rate 16: 128 MACs/cycle; Table 6.5's 20x32 "
                          "input tile, 8x3 tiles cover 80x45 (10x15 useful outputs each), 4 output-channel tiles of "
                          "16: 80*45*64*64*9 / 128 = 1,036,800 ideal cycles = 57.5% of 1,804,452",
                          kernels=72, memories=9, mem_bytes=1280, glb_kb=50.00, pe_use=0.71, mem_use=0.19,
                          occupancy=0.575, latency=1804452),
    "mobilenets pw_1": dict(app="dnn_conv", tile=(28, 28), build=dict(k=1, stride=1, ci=32, co=8, ci_tile=4),
                            invocations=4 * 4 * 8,
                            why="pointwise 112x112x32 -> 112x112x64, 28x28x4x8 tiles: 4 input x 8 output channels = "
                            "32 MACs/cycle, 112*112*32*64 / 32 = 802,816 ideal cycles = 40.4% of 1,984,808",
                            kernels=49, memories=13, mem_bytes=1568, glb_kb=98.00, pe_use=0.39, mem_use=0.88,
                            occupancy=0.404, latency=1984808),
}


def thesis_design(row: dict, op_latency=None):
    """The loom design standing for a TABLE_6_7 row, scheduled with Amber PE latencies by default."""
    from loom.streaming import build_design
    from loom.streaming.kernel_netlist import AMBER

    app = load_app(row["app"])
    out, _ = app.build("accel", tile=row["tile"], **row["build"])
    shape = app.output_shape(row["tile"], row["build"]["co"]) if "invocations" in row else app.output_shape(row["tile"])
    return build_design(out, tuple(shape), op_latency=op_latency or AMBER)


def thesis_report(row: dict, name: str):
    """The design report of a TABLE_6_7 row; a layer row's latency and ideal cycles are its invocations' sum."""
    from dataclasses import replace

    from loom.streaming.report import design_report

    r = design_report(thesis_design(row), name)
    n = row.get("invocations", 1)
    return replace(r, latency=r.latency * n, ideal=r.ideal * n)


def _glb_output(hw_output, x, y, rate, tile, c=None):
    """The thesis's output levels: ``hw_output`` stored in the GLB at the fabric tile, its copy to the host the
    accelerator, ``rate`` pixels a cycle (every channel ``c`` in space). Returns (copy, xo, xio): the
    accelerator's tile loop and the fabric tile loop stages are computed at."""
    from loom.frontends.pipeline import MemoryType, Var

    xo, yo, xi, yi, xio, yio, xii, yii = (Var(n) for n in "xo yo xi yi xio yio xii yii".split())
    top = hw_output.in_()
    top.compute_root().tile(x, y, xo, yo, xi, yi, *tile).hw_accelerate(xi, xo)
    hw_output.tile(x, y, xio, yio, xii, yii, *tile).compute_at(top, xo).store_in(MemoryType.GLB)
    for f, inner in ((top, xi), (hw_output, xii)):
        if c is not None:
            f.unroll(c)
        f.unroll(inner, rate)
    return top, xo, xio


def _glb_input(hw_input, hw_output, top, xo, xio, x, lanes, c=None):
    """The input's memory-tile copy at the fabric tile and its GLB copy at the accelerator's tile, ``lanes``
    pixels a cycle (every channel ``c`` in space); the host streams ``hw_input``."""
    from loom.frontends.pipeline import MemoryType

    copies = [hw_input.in_().in_().compute_at(hw_output, xio), hw_input.in_().compute_at(top, xo)]
    copies[1].store_in(MemoryType.GLB)
    for f in copies:
        if c is not None:
            f.unroll(c)
        if lanes > 1:
            f.unroll(x, lanes)
    hw_input.accelerator_input()


def _gaussian_schedule_3(rate, tile):
    """Halide-to-Hardware gaussian schedule 3: hw_output stored in the GLB, its copy to the host the
    accelerator; blur, blur_unnormalized (update unrolled) and the memory-tile copy of the input at the fabric
    tile; the GLB copy of the input; every stage ``rate`` pixels a cycle."""
    a = load_app("gaussian").algorithm()
    x, hw_output = a["x"], a["output"]
    top, xo, xio = _glb_output(hw_output, x, a["y"], rate, tile)
    a["blur"].compute_at(hw_output, xio).unroll(x, rate)
    bu = a["blur_unnormalized"]
    bu.compute_at(hw_output, xio).unroll(x, rate)
    bu.update().unroll(a["win"].x).unroll(a["win"].y).unroll(x, rate)
    _glb_input(a["hw_input"], hw_output, top, xo, xio, x, rate)
    return top


def _cascade_schedule_3(rate, tile):
    """Halide-to-Hardware cascade schedule 3: conv1, conv1_shift (loom's conv1_norm), conv2 and conv2_shift
    buffered at the fabric tile, hw_output = conv2_shift stored in the GLB, its copy to the host the accelerator."""
    from loom.frontends.pipeline import Func

    a = load_app("cascade").algorithm()
    x, y = a["x"], a["y"]
    conv2_shift, hw_output = Func("conv2_shift"), Func("hw_output")
    conv2_shift[x, y] = a["conv2"][x, y] / 16
    hw_output[x, y] = conv2_shift[x, y]
    top, xo, xio = _glb_output(hw_output, x, y, rate, tile)
    for f, r in ((conv2_shift, None), (a["conv2"], a["r2"]), (a["conv1_norm"], None), (a["conv1"], a["r"])):
        f.compute_at(hw_output, xio).unroll(x, rate)
        if r is not None:
            f.update().unroll(r.x).unroll(r.y).unroll(x, rate)
    _glb_input(a["hw_input"], hw_output, top, xo, xio, x, rate)
    return top


def _harris_color_schedule_3(rate, tile):
    """Halide-to-Hardware harris_color schedule 3: RGB input (its GLB and memory-tile copies unrolled over the 3
    channels), gray, grad_x/grad_y_unclamp (init, update), lxx/lyy/lxy, lgxx/lgyy/lgxy (init, update) and cim
    buffered at the fabric tile, hw_output (the non-maximum suppression) stored in the GLB, its copy to the host
    the accelerator. i16 throughout (gray wraps for bright pixels, as in Halide)."""
    from loom.frontends.pipeline import Func, ImageParam, RDom, UInt8, Var, clamp, i16, select

    harris = load_app("harris")
    x, y, c = Var("x"), Var("y"), Var("c")
    inp = ImageParam(UInt8, 3, "input")
    hw_input, gray = Func("hw_input"), Func("gray")
    hw_input[x, y, c] = i16(inp[x, y, c])
    gray[x, y] = (i16(77) * hw_input[x, y, 0] + i16(150) * hw_input[x, y, 1] + i16(29) * hw_input[x, y, 2]) >> 8
    r, box = RDom(0, 3, 0, 3, name="r"), RDom(0, 3, 0, 3, name="box")
    grads, sq = {}, {}
    for name, w in (("x", harris.SOBEL_X), ("y", harris.SOBEL_Y)):
        k = Func(f"kernel_{name}")
        k[x, y] = i16(0)
        for row in range(3):
            for col in range(3):
                k[col, row] = i16(w[row][col])
        g = Func(f"grad_{name}_unclamp")
        g[x, y] = i16(0)
        g[x, y] += k[r.x, r.y] * gray[x + r.x, y + r.y]
        grads[name] = g
    gx = clamp(grads["x"][x, y], -180, 180)
    gy = clamp(grads["y"][x, y], -180, 180)
    lg = {}
    for name, e in (("xx", gx * gx), ("yy", gy * gy), ("xy", gx * gy)):
        l, s = Func(f"l{name}"), Func(f"lg{name}")
        l[x, y] = e >> 6
        s[x, y] = i16(0)
        s[x, y] += l[x + box.x, y + box.y]
        sq[name], lg[name] = l, s
    a, b, d = (lg[n][x, y] >> 6 for n in ("xx", "yy", "xy"))
    cim = Func("cim")
    cim[x, y] = a * b - d * d - (((a + b) * (a + b)) >> 4)
    ctr = cim[x + 1, y + 1]
    is_max = None
    for dy in range(3):
        for dx in range(3):
            if (dx, dy) != (1, 1):
                v = ctr > cim[x + dx, y + dy]
                is_max = v if is_max is None else is_max & v
    hw_output = Func("hw_output")
    hw_output[x, y] = select(is_max & (ctr >= 1), i16(255), i16(0))
    top, xo, xio = _glb_output(hw_output, x, y, rate, tile)
    for f in (cim, gray, *sq.values()):
        f.compute_at(hw_output, xio).unroll(x, rate)
    for f, rd in [(g, r) for g in grads.values()] + [(s, box) for s in lg.values()]:
        f.compute_at(hw_output, xio).unroll(x, rate)
        f.update().unroll(rd.x).unroll(rd.y).unroll(x, rate)
    _glb_input(hw_input, hw_output, top, xo, xio, x, rate, c=c)
    return top


def _unsharp_schedule_3(rate, tile):
    """Halide-to-Hardware unsharp schedule 3: RGB input (GLB and memory-tile copies unrolled over the 3 channels),
    gray, blur_unnormalized (init, update; blur inlined), sharpen, reciprocal (a per-pixel read of the
    rom_div_lookup ROM) and ratio buffered at the fabric tile, hw_output (ratio x each channel) stored in the
    GLB, its copy to the host the accelerator. sharpen's 2 gray - blur is u32: a negative difference wraps
    and clamps to 255."""
    from loom.frontends.pipeline import Func, ImageParam, RDom, UInt8, Var, clamp, maximum, u16, u32

    weights = load_app("unsharp").WEIGHTS
    x, y, c, i = Var("x"), Var("y"), Var("c"), Var("i")
    inp = ImageParam(UInt8, 3, "input")
    hw_input, gray = Func("hw_input"), Func("gray")
    hw_input[x, y, c] = u16(inp[x, y, c])
    gray[x, y] = (u16(77) * hw_input[x, y, 0] + u16(150) * hw_input[x, y, 1] + u16(29) * hw_input[x, y, 2]) >> 8
    kernel = Func("kernel")
    kernel[x, y] = u32(0)
    for a in range(7):
        for b in range(7):
            kernel[a, b] = u32(weights[b][a])
    win = RDom(0, 7, 0, 7, name="win")
    bu = Func("blur_unnormalized")
    bu[x, y] = u32(0)
    bu[x, y] += kernel[win.x, win.y] * u32(gray[x + win.x, y + win.y])
    sharpen = Func("sharpen")
    sharpen[x, y] = u16(clamp(2 * u32(gray[x + 3, y + 3]) - (bu[x, y] >> 12), 0, 255))
    rom = Func("rom_div_lookup")
    rom[i] = u16(256) / maximum(u16(i), 1)
    rom.bound(i, 0, 256)
    reciprocal, ratio, hw_output = Func("reciprocal"), Func("ratio"), Func("hw_output")
    reciprocal[x, y] = rom[gray[x + 3, y + 3]]
    ratio[x, y] = sharpen[x, y] * reciprocal[x, y]
    hw_output[x, y, c] = u16((u32(ratio[x, y]) * u32(hw_input[x + 3, y + 3, c])) >> 8)
    top, xo, xio = _glb_output(hw_output, x, y, rate, tile, c=c)
    for f in (ratio, reciprocal, sharpen, gray):
        f.compute_at(hw_output, xio).unroll(x, rate)
    bu.compute_at(hw_output, xio).unroll(x, rate)
    bu.update().unroll(win.x).unroll(win.y).unroll(x, rate)
    _glb_input(hw_input, hw_output, top, xo, xio, x, rate, c=c)
    return top


def _gemm_schedule(rate, tile):
    """Halide-to-Hardware gemm (``myunroll`` = ``io_unroll`` = ``rate``): A and B streamed (Halide copies each
    onto the accelerator, ``rate`` copies), mul = 0 then += A(r, y) B(x, r) with ``rate`` output columns and
    ``rate`` terms of the reduction in space, the rest in time, hw_output = mul (i16, wrapping)."""
    from loom.frontends.pipeline import Func, ImageParam, Int16, RDom, Var, i16

    x, y = Var("x"), Var("y")
    a_in, b_in = ImageParam(Int16, 2, "input"), ImageParam(Int16, 2, "kernel")
    hw_input, hw_kernel, mul, hw_output = Func("hw_input"), Func("hw_kernel"), Func("mul"), Func("hw_output")
    hw_input[x, y] = i16(a_in[x, y])
    hw_kernel[x, y] = i16(b_in[x, y])
    r = RDom(0, tile[0], name="r")
    mul[x, y] = i16(0)
    mul[x, y] += hw_input[r.x, y] * hw_kernel[x, r.x]
    hw_output[x, y] = mul[x, y]
    xo, yo, xi, yi = (Var(v) for v in "xo yo xi yi".split())
    hw_output.compute_root().tile(x, y, xo, yo, xi, yi, *tile).hw_accelerate(xi, xo)
    hw_output.unroll(xi, rate)
    mul.compute_at(hw_output, xo).unroll(x, rate)
    mul.update().unroll(r.x, rate).unroll(x, rate)
    hw_input.stream_to_accelerator()
    hw_kernel.stream_to_accelerator()
    return hw_output


def _pyramid_schedule_0(tile):
    """Halide-to-Hardware pyramid_blur schedule 0: hw_output = blur2 the accelerator, blur0, blur1 and blur2
    computed at its tile, the input streamed (no GLB level): loom's shared-form algorithm has these Funcs."""
    from loom.frontends.pipeline import Var

    a = load_app("gaussian_pyramid").shared_algorithm()
    x, y, out = a["x"], a["y"], a["output"]
    xo, yo, xi, yi = (Var(n) for n in "xo yo xi yi".split())
    out.compute_root().tile(x, y, xo, yo, xi, yi, *tile).hw_accelerate(xi, xo)
    for k in range(3):
        a[f"blur{k}"].compute_at(out, xo)
    a["hw_input"].stream_to_accelerator()
    return out


def _upsample_schedule_3(rate, tile, input_lanes=1):
    """Halide-to-Hardware up_sample schedule 3 (``myunroll`` = ``rate``): RGB hw_input = u16(input), its GLB and
    memory-tile copies unrolled over the 3 channels only (one pixel a step each), nearest_neighbor(x, y, c) =
    hw_input(x/2, y/2, c), hw_output (GLB) and its host copy, each 3 channels x ``rate`` pixels a step: 3 + 3 +
    12 x 3 = 42 kernels at rate 4, memories host + 2 copies + 3 = 6. The 1-wide input copies are slower than
    the ``rate``-wide output: the memory-tile copy runs on its own grid along x, an input row per 2 output rows
    (``scheduler.stage_time_strides``). ``input_lanes``: the copies also unrolled along x (the generator has
    this commented out)."""
    from loom.frontends.pipeline import Func, ImageParam, UInt8, Var, u16

    x, y, c = Var("x"), Var("y"), Var("c")
    inp = ImageParam(UInt8, 3, "input")
    hw_input, nearest, hw_output = Func("hw_input"), Func("nearest_neighbor"), Func("hw_output")
    hw_input[x, y, c] = u16(inp[x, y, c])
    nearest[x, y, c] = hw_input[x / 2, y / 2, c]
    hw_output[x, y, c] = nearest[x, y, c]
    top, xo, xio = _glb_output(hw_output, x, y, rate, tile, c=c)
    nearest.compute_at(hw_output, xio).unroll(c).unroll(x, rate)
    _glb_input(hw_input, hw_output, top, xo, xio, x, input_lanes, c=c)
    return top


def _resnet_output_stationary(in_img=8, pad=1, ksize=3, stride=2, n_ic=32, n_oc=16, k_ic=16, k_oc=8, glb_i=4,
                              copies_at_tile=False, taps_in_time=False):
    """Halide-to-Hardware resnet_output_stationary schedule 0 (conv3_1's arguments: stride 2, glb_i = 4; a
    small layer: 8 x 8 x 32 -> 4 x 4 x 16): output_cgra (init, update) k_oc output channels wide with k_ic
    input channels and the 3 x 3 taps in space, the channel reduction split GLB / fabric, the input and weights
    copied host -> GLB -> memory tile (the input's copies glb_i wide), output_glb and hw_output its copies.
    Halide's copy Funcs are loom's in_() copies (loom's GLB level holds copies only). Per thesis: 4 + 4 + 1 + 1
    + 2 x 8 + 1 + 1 = 28 kernels, 9 memories. The memory-tile copies are computed per iteration of the channel
    reduction's GLB loop ``rz_glb``, outside the pixel loops: on the streaming path output_cgra keeps the whole
    tile's partial sums across the channel tiles (``StageNode.reduction_outer``) and the copies are memories
    filled per channel tile in their loop order, the next tile's fill overlapping the current one's use.
    ``copies_at_tile``: the copies at the fabric tile loop ``w_glb`` instead, the reduction ``unroll(r.z, k_ic)``
    (its channel tiles in time per output point; the weights a memory filled per tile, output_cgra 8 channels a
    step under a 1-wide GLB output). ``taps_in_time``: the generator's loop order on master (050fab79, Jan 2022;
    ``reorder(rz_unroll, w, rz_cgra, x, y, r.x, r.y, rz_glb)``, only w and rz_unroll unrolled): the 3 x 3 taps are
    reduction loops in time outside x and y, k_oc x k_ic MACs in space. ``in_img``: a side, or (width, height)."""
    from loom.frontends.pipeline import Func, ImageParam, Int16, MemoryType, RDom, TailStrategy, Var, clamp, i16

    in_w, in_h = in_img if isinstance(in_img, tuple) else (in_img, in_img)
    img_w, img_h = ((n + 2 * pad - ksize) // stride + 1 for n in (in_w, in_h))
    x, y, z, w = Var("x"), Var("y"), Var("z"), Var("w")
    inp, ker = ImageParam(Int16, 3, "input"), ImageParam(Int16, 4, "kernel")
    r = RDom(0, ksize, 0, ksize, 0, n_ic, name="r")
    hw_input, hw_kernel, out_cgra = Func("hw_input"), Func("hw_kernel"), Func("output_cgra")
    hw_input[z, x, y] = i16(inp[z, clamp(x - pad, 0, in_w - 1), clamp(y - pad, 0, in_h - 1)])
    hw_kernel[z, w, x, y] = i16(ker[z, w, x, y])
    out_cgra[w, x, y] = i16(0)
    out_cgra[w, x, y] += hw_kernel[r.z, w, r.x, r.y] * hw_input[r.z, stride * x + r.x, stride * y + r.y]
    names = "x_host y_host x_glb y_glb x_cgra y_cgra xi yi w_cgra w_glb z_cgra z_glb rz_unroll rz_cgra rz_glb"
    x_host, y_host, x_glb, y_glb, x_cgra, y_cgra, xi, yi, w_cgra, w_glb, z_cgra, z_glb, rz_u, rz_cgra, rz_glb = (
        Var(n) for n in names.split())
    most = 14 if stride == 2 else 28
    out_glb = out_cgra.in_()
    top = out_glb.in_()
    top.compute_root().tile(x, y, x_host, y_host, xi, yi, img_w, img_h).reorder(w, xi, yi, x_host, y_host)
    top.hw_accelerate(xi, x_host)
    out_glb.compute_at(top, x_host).store_in(MemoryType.GLB)
    out_glb.tile(x, y, x_glb, y_glb, x_cgra, y_cgra, min(most, img_w), min(most, img_h), TailStrategy.RoundUp)
    out_glb.split(w, w_glb, w_cgra, k_oc)
    out_glb.reorder(w_cgra, x_cgra, y_cgra, w_glb, x_glb, y_glb)
    out_cgra.compute_at(out_glb, w_glb).reorder(w, x, y).unroll(w, k_oc)
    upd = out_cgra.update()
    if copies_at_tile:
        upd.unroll(r.z, k_ic).reorder("r.z_u", r.x, r.y, r.z, w, x, y)  # the channel tiles per point
        upd.unroll(w, k_oc).unroll(r.x).unroll(r.y)
    else:
        upd.split(r.z, rz_glb, rz_cgra, k_ic).split(rz_cgra, rz_cgra, rz_u, k_ic)
        if taps_in_time:
            upd.reorder(rz_u, w, rz_cgra, x, y, r.x, r.y, rz_glb)
            upd.unroll(w, k_oc).unroll(rz_u, k_ic)
        else:
            upd.reorder(rz_u, r.x, r.y, w, rz_cgra, x, y, rz_glb)
            upd.unroll(w, k_oc).unroll(rz_u, k_ic).unroll(r.x).unroll(r.y)
    for f in (hw_input, hw_kernel):
        f.in_().compute_at(top, x_host).store_in(MemoryType.GLB)
        f.in_().in_().compute_at(*((out_glb, w_glb) if copies_at_tile else (out_cgra, rz_glb)))
        f.accelerator_input()
    hw_kernel.in_().in_().split(z, z_glb, z_cgra, k_ic).split(w, w_glb, w_cgra, k_oc)
    hw_kernel.in_().in_().reorder(z_cgra, w_cgra, x, y, z_glb, w_glb)
    hw_input.in_().unroll(z, glb_i)
    if copies_at_tile:  # at the tile loop the input copy streams beside the output, in (z, x, y) order
        hw_input.in_().in_().unroll(z, glb_i)
    else:  # refilled per channel tile, in the thesis's loop order
        hw_input.in_().in_().split(z, z_glb, z_cgra, k_ic).reorder(z_cgra, x, y, z_glb)
        hw_input.in_().in_().unroll(z_cgra, glb_i)
    return top


def _camera_2x2_algorithm():
    """camera_pipeline_2x2's stages as loom reads the app (deinterleave, then demosaic on half-resolution planes):
    u16 hw_input = u16(raw) (Bayer GRBG: green at (2X, 2Y) and (2X + 1, 2Y + 1), red at (2X + 1, 2Y), blue at
    (2X, 2Y + 1)); denoised = hot pixel suppression (clamped to its four same-colour neighbours 2 away); the four
    known planes g_gr, r_r, b_b, g_gb read denoised at (2X + i, 2Y + j) (a down-sampling); the eight interpolated
    ones (g_r, g_b by the smaller of the horizontal and vertical differences, r_gr, b_gr, r_gb, b_gb by the green
    correction, r_b, b_r by the smaller diagonal difference), u16 wrapping; demosaicked(x, y, c) interleaves them by
    parity (x / 2, y / 2: an up-sampling); corrected = clamp((CCM . rgb) >> 8, 0, 255) in i32 and curved = the
    curve ROM: loom's camera_pipeline's colour matrix and curve (the app's constants are not in the thesis).
    Half-resolution coordinates start 2 quads before the tile's (every read index >= 0)."""
    from loom.frontends.pipeline import (Func, ImageParam, UInt8, Var, absolute, clamp, i32, maximum, minimum,
                                         select, u8, u16, u32)
    from loom.examples.pipelines.camera_pipeline import CCM

    x, y, c, i = Var("x"), Var("y"), Var("c"), Var("i")
    raw = ImageParam(UInt8, 2, "input")
    hw_input, denoised = Func("hw_input"), Func("denoised")
    hw_input[x, y] = u16(raw[x, y])
    same = [hw_input[x + 2, y], hw_input[x + 2, y + 4], hw_input[x, y + 2], hw_input[x + 4, y + 2]]
    denoised[x, y] = clamp(hw_input[x + 2, y + 2], minimum(minimum(same[0], same[1]), minimum(same[2], same[3])),
                           maximum(maximum(same[0], same[1]), maximum(same[2], same[3])))
    planes = {}
    for name, (dx, dy) in (("g_gr", (0, 0)), ("r_r", (1, 0)), ("b_b", (0, 1)), ("g_gb", (1, 1))):
        planes[name] = Func(name)
        planes[name][x, y] = denoised[2 * x + dx, 2 * y + dy]

    def at(name, dx=0, dy=0):
        return planes[name][x + dx, y + dy]

    def avg(a, b):
        return u16((u32(a) + u32(b) + 1) >> 1)

    def absd(a, b):
        return absolute(i32(a) - i32(b))

    def define(name, e):
        planes[name] = Func(name)
        planes[name][x, y] = e

    define("g_r", select(absd(at("g_gr", 1), at("g_gr")) < absd(at("g_gb", 0, -1), at("g_gb")),
                         avg(at("g_gr", 1), at("g_gr")), avg(at("g_gb", 0, -1), at("g_gb"))))
    define("g_b", select(absd(at("g_gb", -1), at("g_gb")) < absd(at("g_gr", 0, 1), at("g_gr")),
                         avg(at("g_gb", -1), at("g_gb")), avg(at("g_gr", 0, 1), at("g_gr"))))

    def corrected_avg(green, g_est, colour, a, b):  # green + (mean colour - mean green estimate) of a, b
        return green - avg(at(g_est, *a), at(g_est, *b)) + avg(at(colour, *a), at(colour, *b))

    define("r_gr", corrected_avg(at("g_gr"), "g_r", "r_r", (0, 0), (-1, 0)))
    define("b_gr", corrected_avg(at("g_gr"), "g_b", "b_b", (0, 0), (0, -1)))
    define("r_gb", corrected_avg(at("g_gb"), "g_r", "r_r", (0, 0), (0, 1)))
    define("b_gb", corrected_avg(at("g_gb"), "g_b", "b_b", (0, 0), (1, 0)))
    for name, green, est, colour, p, n in (("r_b", "g_b", "g_r", "r_r", ((0, 0), (-1, 1)), ((-1, 0), (0, 1))),
                                           ("b_r", "g_r", "g_b", "b_b", ((0, 0), (1, -1)), ((1, 0), (0, -1)))):
        pos, neg = (corrected_avg(at(green), est, colour, *d) for d in (p, n))
        define(name, select(absd(at(colour, *p[0]), at(colour, *p[1])) < absd(at(colour, *n[0]), at(colour, *n[1])),
                            pos, neg))
    # per channel, the plane at each parity: (even y: even x, odd x), (odd y: even x, odd x)
    by_colour = {0: (("r_gr", "r_r"), ("r_b", "r_gb")), 1: (("g_gr", "g_r"), ("g_b", "g_gb")),
                 2: (("b_gr", "b_r"), ("b_b", "b_gb"))}
    demosaicked = Func("demosaicked")
    ex, ey = x % 2 == 0, y % 2 == 0

    def interleaved(names):
        (a, b), (d, e) = names
        q = [planes[n][x / 2 + 2, y / 2 + 2] for n in (a, b, d, e)]
        return select(ey, select(ex, q[0], q[1]), select(ex, q[2], q[3]))

    demosaicked[x, y, c] = select(c == 0, interleaved(by_colour[0]),
                                  select(c == 1, interleaved(by_colour[1]), interleaved(by_colour[2])))
    corrected, curve, curved = Func("corrected"), Func("curve"), Func("curved")
    rgb = [i32(demosaicked[x, y, k]) for k in range(3)]
    row = [sum((CCM[ch][k] * rgb[k] for k in range(3)), start=i32(0)) >> 8 for ch in range(3)]
    corrected[x, y, c] = clamp(select(c == 0, row[0], select(c == 1, row[1], row[2])), 0, 255)
    curve[i] = u8(u32(i) * (u32(510) - u32(i)) / 255)
    curve.bound(i, 0, 256)
    curved[x, y, c] = curve[corrected[x, y, c]]
    hw_output = Func("hw_output")
    hw_output[x, y, c] = curved[x, y, c]
    return dict(x=x, y=y, c=c, hw_input=hw_input, denoised=denoised, planes=planes, demosaicked=demosaicked,
                corrected=corrected, curve=curve, curved=curved, hw_output=hw_output)


def _camera_2x2_schedule_3(tile, rows=2):
    """Halide-to-Hardware camera_pipeline_2x2 schedule 3, as read from Table 6.6's 84 kernels / 21 memories: the
    input's GLB and memory-tile copies and denoised 2 x 2 pixels a step (4 kernels each), the 12 half-resolution
    planes 1 a step (12), demosaicked, corrected, curved, hw_output (GLB) and its host copy 2 x 2 x 3 channels
    (12 each): 4 + 4 + 4 + 12 + 5 x 12 = 84; memories: those 21 - 1 Funcs + the host's hw_input = 21 (the curve is
    a ROM). ``rows`` = 1: the same with one row a step (2 pixels along x)."""
    from loom.frontends.pipeline import Var

    a = _camera_2x2_algorithm()
    x, y, c, hw_output = a["x"], a["y"], a["c"], a["hw_output"]
    top, xo, xio = _glb_output(hw_output, x, y, 2, tile, c=c)
    full = (a["curved"], a["corrected"], a["demosaicked"])
    for f in full:
        f.compute_at(hw_output, xio).unroll(c).unroll(x, 2)
    a["denoised"].compute_at(hw_output, xio).unroll(x, 2)
    for p in a["planes"].values():
        p.compute_at(hw_output, xio)
    _glb_input(a["hw_input"], hw_output, top, xo, xio, x, 2)
    if rows > 1:
        for f, v in ((top, Var("yi")), (hw_output, Var("yii"))):
            f.unroll(v, rows)
        for f in (*full, a["denoised"], a["hw_input"].in_(), a["hw_input"].in_().in_()):
            f.unroll(y, rows)
    return top


def camera_2x2_table(row_counts=(2, 1)) -> str:
    """camera_pipeline_2x2 schedule 3 (2 x 2 pixels a step, the 12 planes 1) and its ``rows=1`` variant (2 pixels a
    step) on Table 6.5's tile with Amber PE latencies, beside Table 6.7's camera row."""
    from loom.streaming import build_design
    from loom.streaming.kernel_netlist import AMBER
    from loom.streaming.report import design_report, format_reports

    row = TABLE_6_7["camera"]
    tile = row["tile"]
    lines = []
    for rows in row_counts:
        r = design_report(build_design(_camera_2x2_schedule_3(tile, rows=rows), (*tile, 3), op_latency=AMBER), "camera")
        lines += [f"camera_pipeline_2x2 schedule 3 at {rows} row{'s' if rows > 1 else ''} a step (2 x {rows} pixels, "
                  f"the 12 planes 1) on the {tile[0]} x {tile[1]} x 3 tile, then the thesis's row (2 x 2 a step):",
                  format_reports([r], {"camera": row})]
    return "\n".join(lines)


def resnet_output_stationary_table() -> str:
    """resnet_output_stationary schedule 0 on ResNet's conv3_1 (56 x 56 x 64 -> 28 x 28 x 128, stride 2; one fabric
    invocation: 8 output channels of a 14 x 14 tile) in three forms: the thesis's, copies_at_tile and the
    master branch's loop order (the taps in time); Amber PE latencies, beside Table 6.7's resnet row (the whole
    layer)."""
    from loom.streaming import build_design
    from loom.streaming.extract import Accelerator
    from loom.streaming.kernel_netlist import AMBER
    from loom.streaming.report import design_report, format_reports
    from loom.streaming.scheduler import tile_extents

    lines = []
    forms = {(False, False): "the thesis's form (copies refilled per channel tile at rz_glb)",
             (True, False): "copies_at_tile (the channel tiles in time per point)",
             (False, True): "the master branch's loop order (the 3 x 3 taps in time outside x and y)"}
    for (copies_at_tile, taps_in_time), form in forms.items():
        acc = Accelerator(_resnet_output_stationary(56, stride=2, n_ic=64, n_oc=128, copies_at_tile=copies_at_tile,
                                                    taps_in_time=taps_in_time))
        tile = tile_extents(acc, (128, 28, 28))
        r = design_report(build_design(acc, tile, op_latency=AMBER), "resnet conv3_1")
        lines += [f"resnet_output_stationary, {form}, on conv3_1: one {' x '.join(map(str, tile))} fabric invocation "
                  "(its latency; the thesis's row is the whole layer, 2 x 2 x 16 invocations):",
                  format_reports([r], {"resnet conv3_1": TABLE_6_7["resnet conv3_1"]})]
    return "\n".join(lines)


def _mobilenet_output_stationary(in_img=8, pad=1, ksize=3, stride=1, n_ic=8, n_oc=16, k_ic=4, k_oc=8,
                                 copies_at_tile=False):
    """Halide-to-Hardware mobilenet_output_stationary (pw_1 is its conv1: stride 1, k_ic = 4, k_oc = 8; a small
    layer: 8 x 8 x 8 -> 8 x 8 x 16): dw_conv (init, update) the 3 x 3 depthwise conv, k_ic channels and the taps
    in space, computed per channel tile at the pointwise reduction's GLB loop ``rz_glb``; pw_conv_reduction
    (init, update) k_oc output channels and k_ic input channels in space; the input and both filters copied
    host -> GLB -> memory tile (the memory-tile copies at ``rz_glb``, the input's k_ic wide), output_glb and
    hw_output its copies (the generator's output_cgra is inlined). Per thesis: 1 + 4 + 1 + 1 + 1 + 1 + 2 x 4 +
    2 x 8 + 8 + 8 = 49 kernels, 3 host + 10 = 13 memories. The generator's host-side ReLU of hw_output is not
    part of the accelerator and is left out. ``copies_at_tile``: as resnet's, the copies and dw_conv at the fabric
    tile loop ``w_glb``, the pointwise reduction ``unroll(r_pw.x, k_ic)`` (its channel tiles in time): the form
    the streaming path builds both (the copies and dw_conv memories filled in their own loop order)."""
    from loom.frontends.pipeline import Func, ImageParam, Int16, MemoryType, RDom, TailStrategy, Var, clamp, i16

    img = (in_img + 2 * pad - ksize) // stride + 1
    x, y, z, w = Var("x"), Var("y"), Var("z"), Var("w")
    inp, f_dw = ImageParam(Int16, 3, "input"), ImageParam(Int16, 3, "filter_dw")
    f_pw = ImageParam(Int16, 2, "filter_pw")
    hw_input, hw_filter_dw, hw_filter_pw = Func("hw_input"), Func("hw_filter_dw"), Func("hw_filter_pw")
    hw_input[z, x, y] = i16(inp[z, clamp(x - pad, 0, img - 1), clamp(y - pad, 0, img - 1)])
    hw_filter_dw[z, x, y] = i16(f_dw[z, x, y])
    hw_filter_pw[w, z] = i16(f_pw[w, z])
    r_dw, r_pw = RDom(0, ksize, 0, ksize, name="r_dw"), RDom(0, n_ic, name="r_pw")
    dw_conv, pw = Func("dw_conv"), Func("pw_conv_reduction")
    dw_conv[z, x, y] = i16(0)
    dw_conv[z, x, y] += hw_filter_dw[z, r_dw.x, r_dw.y] * hw_input[z, stride * x + r_dw.x, stride * y + r_dw.y]
    pw[w, x, y] = i16(0)
    pw[w, x, y] += hw_filter_pw[w, r_pw.x] * dw_conv[r_pw.x, x, y]
    dw_cgra, in_cgra, pw_cgra = (f.in_().in_() for f in (hw_filter_dw, hw_input, hw_filter_pw))
    names = "x_host y_host x_glb y_glb x_cgra y_cgra xi yi w_cgra w_glb z_cgra z_glb rz_cgra rz_glb"
    x_host, y_host, x_glb, y_glb, x_cgra, y_cgra, xi, yi, w_cgra, w_glb, z_cgra, z_glb, rz_cgra, rz_glb = (
        Var(n) for n in names.split())
    tile = min(14, img) if stride == 2 else min(28, img)
    out_glb = pw.in_()
    top = out_glb.in_()
    top.compute_root().tile(x, y, x_host, y_host, xi, yi, img, img).reorder(w, xi, yi, x_host, y_host)
    top.hw_accelerate(xi, x_host).unroll(w, k_oc)
    out_glb.compute_at(top, x_host).store_in(MemoryType.GLB)
    out_glb.tile(x, y, x_glb, y_glb, x_cgra, y_cgra, tile, tile, TailStrategy.RoundUp).split(w, w_glb, w_cgra, k_oc)
    out_glb.reorder(w_cgra, x_cgra, y_cgra, w_glb, x_glb, y_glb).unroll(w_cgra, k_oc)
    pw.compute_at(out_glb, w_glb).unroll(w, k_oc)
    if copies_at_tile:
        at = (out_glb, w_glb)
        pw.update().unroll(r_pw.x, k_ic).unroll(w, k_oc)
    else:
        at = (pw, rz_glb)
        pw.update().split(r_pw.x, rz_glb, rz_cgra, k_ic).reorder(rz_cgra, w, x, y, rz_glb)
        pw.update().unroll(rz_cgra).unroll(w, k_oc)
    dw_conv.compute_at(*at).unroll(z, k_ic)
    dw_conv.update().split(z, z_glb, z_cgra, k_ic).reorder(z_cgra, r_dw.x, r_dw.y, x, y, z_glb)
    dw_conv.update().unroll(r_dw.x).unroll(r_dw.y).unroll(z_cgra, k_ic)
    for f in (hw_input, hw_filter_dw, hw_filter_pw):
        f.in_().compute_at(top, x_host).store_in(MemoryType.GLB)
        f.in_().in_().compute_at(*at)
        f.accelerator_input()
    in_cgra.unroll(z, k_ic)
    dw_cgra.split(z, z_glb, z_cgra, k_ic).reorder(z_cgra, x, y, z_glb)
    pw_cgra.split(z, z_glb, z_cgra, k_ic).split(w, w_glb, w_cgra, k_oc).reorder(z_cgra, w_cgra, z_glb, w_glb)
    return top


# Table 6.7 row -> (the Halide-to-Hardware schedule the thesis ran, written in loom at its rate, given the x, y
# tile; the output size). The counts do not depend on the tile: a small one keeps the build fast.
HALIDE_TO_HARDWARE = {
    "gaussian": (lambda tile: _gaussian_schedule_3(16, tile), (64, 8)),
    "cascade": (lambda tile: _cascade_schedule_3(12, tile), (48, 8)),
    "harris": (lambda tile: _harris_color_schedule_3(4, tile), (16, 6)),
    "unsharp": (lambda tile: _unsharp_schedule_3(3, tile), (12, 6, 3)),
    "gaussian pyramid": (_pyramid_schedule_0, (8, 8)),
    "gemm": (lambda tile: _gemm_schedule(8, tile), (16, 16)),
    "upsample": (lambda tile: _upsample_schedule_3(4, tile), (16, 8, 3)),
    "camera": (lambda tile: _camera_2x2_schedule_3(tile), (16, 8, 3)),
    # one fabric invocation: 8 output channels of the small layer's whole output (channels first)
    "resnet conv3_1": (lambda tile: _resnet_output_stationary(), (8, 4, 4)),
    "mobilenets pw_1": (lambda tile: _mobilenet_output_stationary(), (8, 8, 8)),
}
# rows whose simulated output is not 2 x 2 invocations in x, y: the layer's whole output (2 channel tiles)
_RUN_SIZE = {"resnet conv3_1": (16, 4, 4), "mobilenets pw_1": (16, 8, 8)}


def halide_to_hardware_run_size(name: str) -> tuple:
    """The output HALIDE_TO_HARDWARE[name] is simulated over: 2 x 2 invocations of its x, y tile, or a DNN
    layer's whole output (its output channel tiles)."""
    tile = HALIDE_TO_HARDWARE[name][1]
    return _RUN_SIZE.get(name, (2 * tile[0], 2 * tile[1], *tile[2:]))


# Thesis schedules written in loom that loom refuses: row -> (schedule, output size, what loom lacks).
REFUSED: dict = {
}
# Thesis schedules not written in loom yet: row -> what the schedule needs.
NOT_WRITTEN = {
}


def halide_to_hardware_design(name: str):
    """The design of HALIDE_TO_HARDWARE[name] (or REFUSED[name], which raises loom's LoomError): the thesis's
    own schedule of that Table 6.7 row."""
    from loom.streaming import build_design

    make, size = HALIDE_TO_HARDWARE[name] if name in HALIDE_TO_HARDWARE else REFUSED[name][:2]
    return build_design(make(size[:2]), size)


def harris_schedule_design(sch: int, op_latency=None):
    """harris with the buffering of Code 6.1 schedule ``sch`` on a 64x64 input (Table 6.1)."""
    from loom.streaming import build_design
    from loom.streaming.kernel_netlist import AMBER

    out, _ = load_app("harris").build("accel", tile=TABLE_6_1_SIZE, sch=sch)
    return build_design(out, TABLE_6_1_SIZE, op_latency=op_latency or AMBER)


def table_6_1(rows=None):
    """(text, reports) of Table 6.1: loom's harris designs beside the thesis's PEs, MEMs and cycles."""
    from loom.streaming.report import design_report, format_rows

    lines, reports = [], []
    for label in rows or TABLE_6_1:
        sch, pes, mems, cycles = TABLE_6_1[label]
        r = design_report(harris_schedule_design(sch), label)
        reports.append(r)
        lines.append((label, str(r.pes), str(pes), str(r.mems), str(mems), str(r.latency), str(cycles),
                      f"{(r.latency - cycles) / cycles:+.2%}"))
    head = ("schedule", "PEs", "thesis", "MEMs", "thesis", "cycles", "thesis", "gap")
    return format_rows(head, lines), reports


def table_6_7(names=None):
    """(text, reports, skipped) of Tables 6.6/6.7: a loom row, then the thesis's, per reproduced app."""
    from loom.streaming.report import format_reports

    reports, thesis, skipped = [], {}, []
    for name in names or TABLE_6_7:
        row = TABLE_6_7[name]
        if row["app"] is None:
            skipped.append(f"  {name}: not reproduced ({row['why']})")
            continue
        reports.append(thesis_report(row, name))
        thesis[name] = row
    return format_reports(reports, thesis), reports, skipped


def halide_to_hardware_values(name: str, seed: int = 0) -> bool:
    """Value-simulate HALIDE_TO_HARDWARE[name] (from its ubuf IR) over ``halide_to_hardware_run_size`` on random inputs of
    the element types' full range; True when equal to the reference evaluator (numpy references: tests)."""
    import numpy as np

    from loom.frontends.pipeline.bounds import infer_bounds
    from loom.frontends.pipeline.evaluate import evaluate, output_region
    from loom.streaming import build_design, simulate

    make, tile = HALIDE_TO_HARDWARE[name]
    out = make(tile[:2])
    design = build_design(out, tile)
    size = halide_to_hardware_run_size(name)
    pipe, rng = design.acc.pipe, np.random.default_rng(seed)
    regions = infer_bounds(pipe, output_region(pipe.output, size))
    ins = {}
    for p in pipe.params:  # every input read from 0 (the thesis schedules have no negative offsets)
        info = np.iinfo(p.type.dtype)
        shape = tuple(hi + 1 for _lo, hi in reversed(regions[id(p)]))
        ins[p.name] = rng.integers(info.min, info.max, shape, endpoint=True).astype(p.type.dtype)
    return bool(np.array_equal(simulate(out, ins, size, design=design), evaluate(out, ins, size)))


def table_6_6_halide_to_hardware(values: bool = False) -> str:
    """Table 6.6's kernels and memories of the thesis's own schedules written in loom, beside the thesis's."""
    from loom.streaming.report import clockwork_counts, format_rows

    from loom.errors import LoomError

    lines = []
    for name in HALIDE_TO_HARDWARE:
        c, row = clockwork_counts(halide_to_hardware_design(name)), TABLE_6_7[name]
        lines.append((name, str(c.kernels), str(row["kernels"]), str(c.memories), str(row["memories"]))
                     + ((("bit-exact" if halide_to_hardware_values(name) else "DIFFERENT"),) if values else ()))
    notes = []
    for name in REFUSED:
        row = TABLE_6_7[name]
        try:
            halide_to_hardware_design(name)
            why = "builds (REFUSED is stale)"
        except LoomError as e:
            why = f"refused: {e}"
        lines.append((name, "-", str(row["kernels"]), "-", str(row["memories"])) + (("-",) if values else ()))
        notes.append(f"  {name}: {why}")
    notes += [f"  {name}: not written ({why})" for name, why in NOT_WRITTEN.items()]
    head = ("schedule", "kernels", "thesis", "memories", "thesis") + (("simulated values",) if values else ())
    return "\n".join([format_rows(head, lines), *notes])


# the image rows of Table 6.7 whose Halide-to-Hardware schedule runs on the row's own tile (the layer rows' schedules
# compute one fabric invocation of a small layer)
IMAGE_ROWS = ("gaussian", "cascade", "harris", "unsharp", "gaussian pyramid", "upsample", "camera")


def halide_to_hardware_report(name: str):
    """The DesignReport of the thesis's own schedule of an image row (HALIDE_TO_HARDWARE[name], at its rate) on
    the row's Table 6.5 tile, with Amber PE latencies, named as the row."""
    from loom.streaming import build_design
    from loom.streaming.kernel_netlist import AMBER
    from loom.streaming.report import design_report

    make, small = HALIDE_TO_HARDWARE[name]
    tile = TABLE_6_7[name]["tile"]
    return design_report(build_design(make(tile), (*tile, *small[2:]), op_latency=AMBER), name)


def table_6_7_halide_to_hardware(names=IMAGE_ROWS):
    """(text, reports): Table 6.7's image rows from the thesis's own schedules written in loom, each beside the
    thesis's row."""
    from loom.streaming.report import format_reports

    reports = [halide_to_hardware_report(n) for n in names]
    return format_reports(reports, {n: TABLE_6_7[n] for n in names}), reports


def upsample_schedule_3_report():
    """up_sample schedule 3 at rate 4 on Table 6.5's tile (a 600 x 400 x 3 output per invocation), Amber PE
    latencies: its DesignReport, named "upsample" to sit beside Table 6.7's row."""
    return halide_to_hardware_report("upsample")


def upsample_schedule_3_table() -> str:
    """The latency arithmetic of ``upsample_schedule_3_report`` (its row is in ``table_6_7_halide_to_hardware``)."""
    r, row = upsample_schedule_3_report(), TABLE_6_7["upsample"]
    w, h = row["tile"]
    return (f"upsample (up_sample schedule 3: rate 4, input copies 1 pixel a step, {w} x {h} x 3 tile): latency "
            f"{r.latency} = ideal {r.ideal} ({w} x {h} / 4) + {r.latency - r.ideal} (the first output waits for half "
            f"an input row); ideal / latency {r.ideal / r.latency:.2%}; thesis {row['latency']}")


def thesis_tables() -> str:
    """Thesis Table 6.1 (harris buffering) and Tables 6.6/6.7 (the thesis apps), loom beside the thesis."""
    t61, _ = table_6_1()
    t67, _, skipped = table_6_7()
    return "\n".join(["Table 6.1 (harris, 64x64 input):", t61, "", "Tables 6.6 / 6.7 (loom row, then the thesis's):",
                      t67, *skipped, "", "Table 6.6, the Halide-to-Hardware schedules written in loom:",
                      table_6_6_halide_to_hardware(), "",
                      "Table 6.7's image rows from the thesis's own schedules written in loom, on Table 6.5's tiles:",
                      table_6_7_halide_to_hardware()[0], upsample_schedule_3_table(), "", camera_2x2_table((1,))])


__all__ = ["HALIDE_TO_HARDWARE", "IMAGE_ROWS", "NOT_WRITTEN", "REFUSED", "TABLE_6_1", "TABLE_6_1_SIZE", "TABLE_6_7",
           "camera_2x2_table", "halide_to_hardware_design", "halide_to_hardware_report",
           "halide_to_hardware_run_size", "halide_to_hardware_values", "harris_schedule_design",
           "resnet_output_stationary_table", "table_6_1", "table_6_6_halide_to_hardware", "table_6_7",
           "table_6_7_halide_to_hardware", "thesis_design", "thesis_report", "thesis_tables",
           "upsample_schedule_3_report", "upsample_schedule_3_table"]
