"""max_pool: 2x2 max-pooling with stride 2 (a down-sampling stage), in u8.

output(x, y) = max of input(2x + i, 2y + j), i, j in {0, 1}. Input 2w x 2h u8 -> output w x h u8.
``build("accel", tile)`` streams the input at one pixel per cycle; the pooling stage fires every
other cycle of every other row (its own time grid), so hw_input holds about one input row (2w + 1
values), not a tile's worth, and the design is input bound (4 input pixels per output). ``input_rate=4``
fills hw_input 4 pixels per cycle (``hw_input.unroll(x, 4)``, its own time grid along x): the pooling stage
then fires every cycle, one output per cycle.
"""

from loom.errors import LoomError
from loom.frontends.pipeline import Func, ImageParam, UInt8, Var, maximum
from loom.frontends.pipeline.recipes import compute_in_tiles, schedule_app, stream_through_accelerator
from loom.examples.pipelines._inputs import image_inputs


def algorithm():
    x, y = Var("x"), Var("y")
    inp = ImageParam(UInt8, 2, "input")
    hw_input = Func("hw_input")
    hw_input[x, y] = inp[x, y]
    output = Func("output")
    output[x, y] = maximum(maximum(hw_input[2 * x, 2 * y], hw_input[2 * x + 1, 2 * y]),
                           maximum(hw_input[2 * x, 2 * y + 1], hw_input[2 * x + 1, 2 * y + 1]))
    return dict(x=x, y=y, input=inp, hw_input=hw_input, output=output)


def cpu_schedule(a, tile=(16, 16)):
    compute_in_tiles(a["output"], tile, [a["hw_input"]])


def accel_schedule(a, tile=(32, 32), input_rate=1):
    stream_through_accelerator(a["output"], tile, buffered=[a["hw_input"]])
    if input_rate > 1:  # the input memory fills faster than the pooling stage reads it
        a["hw_input"].unroll(a["x"], input_rate)


def build(schedule="accel", tile=(32, 32), input_rate=1):
    """``input_rate``: input pixels per cycle into hw_input (the output computes one pixel per cycle)."""
    if not isinstance(input_rate, int) or input_rate < 1:
        raise LoomError(f"max_pool input_rate must be a positive integer, got {input_rate!r}",
                        where="max_pool.build(input_rate=)")
    return schedule_app(algorithm(), schedule, cpu_schedule, accel_schedule, tile=tile, input_rate=input_rate)


def input_shape(size):
    w, h = size
    return (2 * h, 2 * w)


make_inputs = image_inputs(input_shape)


def output_shape(size):
    return tuple(size)


if __name__ == "__main__":  # the design, its simulation and the CPU run, checked: ``loom pipeline max_pool``
    from loom.cli import main

    raise SystemExit(main(["pipeline", "max_pool", "--size", "32x32"]))
