"""The EKL example kernels shipped with loom (``loom/examples/ekl/*.ekl``), by kernel name."""

from pathlib import Path

EKL_DIR = Path(__file__).resolve().parent / "ekl"
EKL_EXAMPLES = {path.stem: path for path in sorted(EKL_DIR.glob("*.ekl"))}

__all__ = ["EKL_DIR", "EKL_EXAMPLES"]
