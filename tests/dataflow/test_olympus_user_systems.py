"""olympus passes on a user's own systems: on-chip (small) buffers count in the replication limit as they do in
the utilisation report, and a kernel declaring next to no resources does not ask for 10^5 copies."""

from __future__ import annotations

from pathlib import Path

import pytest
from xdsl.parser import Parser

from loom.dialects import context
from loom.dialects.olympus import KernelOp
from loom.errors import LoomError
from loom.passes import Pipeline
from loom.passes.olympus_model import analyse
from loom.platform import load_platform

P256 = str(Path(__file__).parent / "olympus" / "platform_256.json")  # ff 200000, lut 100000, bram 100, dsp 100


def _system(ff: int, lut: int, bram: int) -> str:
    # a forecast kernel with two on-chip weight tables (small: 1024 x 64 bit = 4 BRAMs of 18 kb each) and a result
    # stream; no global memory
    kernel = (f'callee = "forecast", latency = 10 : i64, ii = 8 : i64, ff = {ff} : i64, lut = {lut} : i64, '
              f'bram = {bram} : i64, uram = 0 : i64, dsp = 0 : i64, operandSegmentSizes = array<i32: 2, 1>')
    return f"""
%w = "olympus.channel"() <{{paramType = "small", depth = 1024 : i64}}> : () -> !olympus.channel<i64>
%b = "olympus.channel"() <{{paramType = "small", depth = 1024 : i64}}> : () -> !olympus.channel<i64>
%o = "olympus.channel"() <{{paramType = "stream", depth = 16 : i64}}> : () -> !olympus.channel<i64>
"olympus.kernel"(%w, %b, %o) <{{{kernel}}}> : (!olympus.channel<i64>, !olympus.channel<i64>, !olympus.channel<i64>) -> ()
"""


def _replicate(text: str, options: str = ""):
    module = Parser(context(), text).parse_module()
    Pipeline.parse(f'olympus-replication{{platform="{P256}"{options}}}').run(module)
    return module, [op for op in module.walk() if isinstance(op, KernelOp)]


def test_on_chip_buffers_count_in_the_replication_limit():
    """Replication counted the kernels' BRAMs only: 1 + 2 x 4 BRAMs per copy became 80 copies (the kernel's
    1 BRAM against 80% of 100), 720% of the device's BRAM by the pass's own report."""
    module, kernels = _replicate(_system(ff=1000, lut=100, bram=1))
    per_copy = 1 + 2 * 4  # ceil(1024 * 64 / (18 * 1024)) = 4 per table
    assert len(kernels) == int(0.8 * 100 // per_copy) == 8
    assert analyse(module, load_platform(P256)).utilization("bram") == pytest.approx(8 * per_copy / 100)


def test_a_kernel_of_next_to_no_resources_gets_a_bounded_number_of_copies():
    """ff = 1, lut = 1 and no BRAM besides its buffers asked for 10^5 copies; cloning them did not end."""
    text = _system(ff=1, lut=1, bram=0).replace("paramType = \"small\"", "paramType = \"stream\"")
    _, kernels = _replicate(text)
    assert len(kernels) == 256
    _, kernels = _replicate(text, " max_copies=3")
    assert len(kernels) == 3
    with pytest.raises(LoomError, match="max_copies must be >= 1, got 0"):
        _replicate(text, " max_copies=0")


@pytest.mark.parametrize("change, where, message", [
    ({"utilisation_limit": 0.5}, "utilisation_limit", "unknown key 'utilisation_limit'"),
    ({"memory": {"channels": 4, "width_bits": 256, "clock_mhz": 300, "chanels": 8}}, "memory.chanels",
     "unknown key 'chanels'"),
    ({"resources": {"ff": 1, "lut": 1, "bram": 1, "uram": -1, "dsp": 1}}, "resources.uram", "must be >= 0, got -1"),
])
def test_a_platform_with_a_misspelt_key_or_negative_resource_is_refused(tmp_path, change, where, message):
    """'utilisation_limit' was ignored (the limit stayed 80%) and a negative resource count was taken."""
    import json

    desc = {**json.loads(Path(P256).read_text()), **change}
    path = tmp_path / "p.json"
    path.write_text(json.dumps(desc))
    with pytest.raises(LoomError, match=message) as info:
        load_platform(str(path))
    assert info.value.where == where and info.value.filename == str(path)
