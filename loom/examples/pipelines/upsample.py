"""upsample: 2x up-sampling by linear interpolation between neighbours, in u16 (``x / 2`` indexing).

output(x, y) = u8((in(x/2, y/2) + in((x+1)/2, y/2) + in(x/2, (y+1)/2) + in((x+1)/2, (y+1)/2)) / 4),
integer division flooring (Halide's). Input (w/2 + 1) x (h/2 + 1) u8 (w, h even) -> output w x h u8.
``build("accel", tile)`` produces one output pixel per cycle and takes an input pixel every other
cycle of every other row (the input's time grid has strides 2 and 2 rows): a quasi-affine access,
``floor((x + 1)/2)`` in isl. ``build(mode="nearest")`` is the thesis's nearest-neighbour upsample
(output(x, y) = u8(in(x/2, y/2))): no arithmetic, so no PE (thesis §6.5).
"""

from loom.errors import LoomError
from loom.frontends.pipeline import Func, ImageParam, UInt8, Var, u8, u16
from loom.frontends.pipeline.recipes import compute_in_tiles, schedule_app, stream_through_accelerator
from loom.examples.pipelines._inputs import image_inputs


MODES = ("linear", "nearest")


def algorithm(mode="linear"):
    if mode not in MODES:
        raise LoomError(f"mode must be one of {', '.join(MODES)}, got {mode!r}", where="upsample.algorithm")
    x, y = Var("x"), Var("y")
    inp = ImageParam(UInt8, 2, "input")
    hw_input = Func("hw_input")
    hw_input[x, y] = u16(inp[x, y])
    output = Func("output")
    if mode == "nearest":
        output[x, y] = u8(hw_input[x / 2, y / 2])
        return dict(x=x, y=y, input=inp, hw_input=hw_input, output=output)
    output[x, y] = u8((hw_input[x / 2, y / 2] + hw_input[(x + 1) / 2, y / 2] + hw_input[x / 2, (y + 1) / 2]
                       + hw_input[(x + 1) / 2, (y + 1) / 2]) / 4)
    return dict(x=x, y=y, input=inp, hw_input=hw_input, output=output)


def cpu_schedule(a, tile=(16, 16)):
    compute_in_tiles(a["output"], tile, [a["hw_input"]])


def accel_schedule(a, tile=(64, 64)):
    stream_through_accelerator(a["output"], tile, buffered=[a["hw_input"]])


def build(schedule="accel", tile=(64, 64), mode="linear"):
    return schedule_app(algorithm(mode), schedule, cpu_schedule, accel_schedule, tile=tile)


def input_shape(size):
    w, h = size
    return (h // 2 + 1, w // 2 + 1)


make_inputs = image_inputs(input_shape)


def output_shape(size):
    return tuple(size)


if __name__ == "__main__":  # the design, its simulation and the CPU run, checked: ``loom pipeline upsample``
    from loom.cli import main

    raise SystemExit(main(["pipeline", "upsample", "--size", "64x64"]))
