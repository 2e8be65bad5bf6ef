"""A platform may have none of a resource (no URAM, say); a kernel that needs it does not fit there."""

import json
import math
from pathlib import Path

import pytest
from xdsl.parser import Parser

from loom.dialects import context
from loom.dialects.olympus import KernelOp
from loom.passes import Pipeline
from loom.passes.olympus_model import analyse
from loom.platform import load_platform

HERE = Path(__file__).parent / "olympus"


def test_a_resource_the_platform_lacks_is_over_the_limit_not_zero_percent(tmp_path):
    desc = json.loads((HERE / "platform_256.json").read_text())
    desc["resources"]["dsp"] = 0  # one_kernel's @vadd uses 12 DSPs
    path = tmp_path / "no_dsp.json"
    path.write_text(json.dumps(desc))
    m = Parser(context(), (HERE / "one_kernel.mlir").read_text()).parse_module()
    report = analyse(m, load_platform(str(path)))
    assert math.isinf(report.utilization("dsp"))
    assert report.utilization("uram") == 0.0  # unused and absent: nothing to say
    assert report.utilization("ff") == 20000 / desc["resources"]["ff"]
    assert [r[2] for r in report.rows() if r[0] == "resource dsp"] == ["inf%"]
    Pipeline.parse(f'olympus-replication{{platform="{path}"}}').run(m)
    assert len([o for o in m.walk() if isinstance(o, KernelOp)]) == 1  # nothing to replicate into


def test_integral_numbers_in_any_json_spelling_are_counts():
    """`"lut": 1e6` is JSON's spelling of an integer (the accelerator loader takes it); it was refused with
    'expected int, got 1000000.0'. A fraction stays refused."""
    from loom.errors import LoomError
    from loom.platform import load_platform

    spec = {"name": "big", "clock_mhz": 300,
            "resources": {"ff": 2e6, "lut": 1e6, "bram": 4.0e3, "uram": 960, "dsp": 9024},
            "memory": {"channels": 2, "width_bits": 512.0, "clock_mhz": 300}}
    p = load_platform(spec)
    assert p.resources["lut"] == 1_000_000 and type(p.resources["lut"]) is int
    spec["resources"]["dsp"] = 10.5
    with pytest.raises(LoomError, match=r"resources.dsp: expected int, got 10.5"):
        load_platform(spec)
