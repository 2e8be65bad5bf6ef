"""gaussian_pyramid (thesis §5, Figure 5.1): three levels of 2x2 averaging, each down-sampled by 2, in u16.

level_k(x, y) = (level_{k-1}(2x, 2y) + (2x+1, 2y) + (2x, 2y+1) + (2x+1, 2y+1)) / 4, level_0 = input.
Input 8w x 8h u8 -> output w x h u8 (the third level). ``build("accel", tile)`` streams it at one input
pixel per cycle with each level on its own time grid (strides 2, 4, 8 cycles per pixel): buffers
hw_input, blur0, blur1 (thesis Table 5.1, spatial: 115 words, 4096 cycles on a 64x64 input).
``build("accel", share="line" | "block")`` is the shared form (thesis §5, Code 5.1/5.2): three
identical levels blur0, blur1, blur2 time-multiplexed on one kernel, output = u8(blur2).
"""

from loom.frontends.pipeline import Func, ImageParam, UInt8, Var, u8, u16
from loom.frontends.pipeline.recipes import compute_in_tiles, schedule_app, share_kernels, stream_through_accelerator
from loom.examples.pipelines._inputs import image_inputs

LEVELS = 3
SCALE = 2 ** LEVELS  # input pixels per output pixel along x and along y


def _down(f, x, y):
    """The 2x2 average of f at (2x, 2y): sum, then / 4 (u16)."""
    return (f[2 * x, 2 * y] + f[2 * x + 1, 2 * y] + f[2 * x, 2 * y + 1] + f[2 * x + 1, 2 * y + 1]) / 4


def algorithm():
    x, y = Var("x"), Var("y")
    inp = ImageParam(UInt8, 2, "input")
    hw_input = Func("hw_input")
    hw_input[x, y] = u16(inp[x, y])
    blur0, blur1 = Func("blur0"), Func("blur1")
    blur0[x, y] = _down(hw_input, x, y)
    blur1[x, y] = _down(blur0, x, y)
    output = Func("output")
    output[x, y] = u8(_down(blur1, x, y))
    return dict(x=x, y=y, input=inp, hw_input=hw_input, blur0=blur0, blur1=blur1, output=output)


def shared_algorithm():
    """Thesis form for compute sharing: LEVELS identical 2x2 averaging levels, then output = u8(last level)."""
    x, y = Var("x"), Var("y")
    inp = ImageParam(UInt8, 2, "input")
    hw_input = Func("hw_input")
    hw_input[x, y] = u16(inp[x, y])
    out = dict(x=x, y=y, input=inp, hw_input=hw_input)
    src = hw_input
    for k in range(LEVELS):
        blur = Func(f"blur{k}")
        blur[x, y] = _down(src, x, y)
        out[f"blur{k}"] = src = blur
    output = Func("output")
    output[x, y] = u8(src[x, y])
    out["output"] = output
    return out


def shared_schedule(a, tile=(8, 8), share="line"):
    blurs = [a[f"blur{k}"] for k in range(LEVELS)]
    loops = stream_through_accelerator(a["output"], tile, buffered=[a["hw_input"], *blurs])
    share_kernels(blurs, share, loops)


def cpu_schedule(a, tile=(8, 8)):
    compute_in_tiles(a["output"], tile, [a["blur0"], a["blur1"]])


def accel_schedule(a, tile=(8, 8)):
    stream_through_accelerator(a["output"], tile, buffered=[a["hw_input"], a["blur0"], a["blur1"]])


def build(schedule="accel", tile=(8, 8), share=None):
    if share is not None:
        return schedule_app(shared_algorithm(), schedule, cpu_schedule, shared_schedule, tile=tile, share=share)
    return schedule_app(algorithm(), schedule, cpu_schedule, accel_schedule, tile=tile)


def input_shape(size):
    w, h = size
    return (SCALE * h, SCALE * w)


make_inputs = image_inputs(input_shape)


def output_shape(size):
    return tuple(size)


if __name__ == "__main__":  # the design, its simulation and the CPU run, checked: ``loom pipeline gaussian_pyramid``
    from loom.cli import main

    raise SystemExit(main(["pipeline", "gaussian_pyramid", "--size", "8x8"]))
