import sys
from pathlib import Path

# the accelerator-flow builders (kernels, descriptions, arrays)
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "accel_flow"))
