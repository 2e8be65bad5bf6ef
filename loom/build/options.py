"""What ``loom build`` is asked to produce (the seed's options, plus loom's own)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from loom.errors import LoomError

# Artifact families a build can write; "all" is every one the input supports.
TARGETS = ("all", "mlir", "c", "driver", "hls")


@dataclass(frozen=True)
class BuildOptions:
    target: str = "all"
    threads: int = field(default_factory=lambda: os.cpu_count() or 1)
    accel: str | None = None          # accelerator description (JSON) for driver artifacts
    accel_name: str | None = None     # which accelerator of the description
    flow: str | None = None           # its flow (or "auto")
    dims: dict[str, int] = field(default_factory=dict)   # sizes of dynamic dims for checks
    size: tuple[int, int] = (32, 32)  # output size of image pipelines
    check: bool = True                # run each unit once against its reference
    seed: int = 0
    input_shapes: tuple[tuple[int, ...], ...] = ()  # models: the shape of each input (dynamic models)
    ranges: dict[str, tuple[float, float]] = field(default_factory=dict)  # EKL inputs drawn from [lo, hi)
    number_format: str | None = None  # HLS C++ computing the f32/f64 of a unit in this loom format
    rounding: str = "nearest_even"    # ... with these modes (docs/formats.md)
    overflow: str | None = None

    def __post_init__(self):
        if self.target not in TARGETS:
            raise LoomError(f"unknown target {self.target!r}; expected one of {', '.join(TARGETS)}", where="--target")
        if not isinstance(self.threads, int) or self.threads < 1:
            raise LoomError(f"--threads must be a positive integer, got {self.threads!r}", where="--threads")
        if self.target == "driver" and not self.accel:
            raise LoomError("--target driver needs an accelerator description (--accel FILE.json)", where="--target")
        for shape in self.input_shapes:
            if not shape or any(not isinstance(d, int) or d < 1 for d in shape):
                raise LoomError(f"bad input shape {shape!r}: expected positive integers", where="--input-shape")
        if any(v < 1 for v in self.size):
            raise LoomError(f"--size must be positive, got {self.size}", where="--size")
        for name, bounds in self.ranges.items():
            if (len(bounds) != 2 or any(isinstance(b, bool) or not isinstance(b, (int, float)) for b in bounds)
                    or not bounds[0] < bounds[1]):
                raise LoomError(f"range of {name}: expected (LO, HI) numbers with LO < HI, got {bounds!r}",
                                where="--range")
        if self.number_format is not None:
            self.hls_format_type()  # a bad name or mode is refused before anything is built
        elif self.rounding != "nearest_even" or self.overflow is not None:
            raise LoomError("rounding and overflow are modes of a number format: give the format too",
                            where="--format")

    def hls_format_type(self):
        """The HLS type of ``number_format`` (ap_fixed or loom_float), or None."""
        if self.number_format is None:
            return None
        from loom.backends.hls.types import hls_type_of_format

        return hls_type_of_format(self.number_format, self.rounding, self.overflow)

    def wants(self, family: str) -> bool:
        return self.target in ("all", family)


def parse_shape(text: str) -> tuple[int, ...]:
    """``1,3,224,224`` -> (1, 3, 224, 224): one model input's shape (``--input-shape``)."""
    try:
        dims = tuple(int(t) for t in text.split(","))
    except ValueError:
        dims = ()
    if not dims or min(dims) < 1:
        raise LoomError(f"bad --input-shape {text!r}: expected positive integers like 1,3,224,224",
                        where="--input-shape")
    return dims
