"""A platform may have none of a resource (no URAM, say); a kernel that needs it does not fit there."""

import json
import math
from pathlib import Path

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
