"""FPGA platform descriptions (JSON) for system integration: resources and memory channels.

    {"name": "u55c", "clock_mhz": 300,
     "resources": {"ff": 2607360, "lut": 1303680, "bram": 4032, "uram": 960, "dsp": 9024},
     "memory": {"channels": 32, "width_bits": 256, "clock_mhz": 450},
     "utilization_limit": 0.8}

``load_platform(path_or_dict)`` parses and checks it once; errors are ``LoomError``s
naming the JSON path (``memory.width_bits``) and what was expected.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from loom.core.json_text import read_json_file
from loom.errors import LoomError

RESOURCES = ("ff", "lut", "bram", "uram", "dsp")


@dataclass(frozen=True)
class Platform:
    name: str
    clock_mhz: float
    resources: dict[str, int]
    memory_channels: int
    memory_width_bits: int
    memory_clock_mhz: float
    utilization_limit: float = 0.8

    @property
    def pc_bytes_per_second(self) -> float:
        return self.memory_width_bits / 8 * self.memory_clock_mhz * 1e6


def _get(data: dict, key: str, path: str, kind, filename: str | None, positive: bool = True):
    where = f"{path}{key}"
    if not isinstance(data, dict):  # (a section that is not an object is reported where it is read)
        raise LoomError(f"expected a JSON object with {key!r}, got {type(data).__name__} {data!r:.40}",
                        filename=filename, where=path.rstrip(".") or "(top level)")
    if key not in data:
        raise LoomError(f"missing {key!r}", filename=filename, where=path.rstrip(".") or "(top level)")
    value = data[key]
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    if kind is int and isinstance(value, float) and value.is_integer():  # 1e6 or 4.0: an integer in JSON's spelling
        value = int(value)
    if not isinstance(value, kind) or isinstance(value, bool):
        raise LoomError(f"expected {'a number' if kind is float else kind.__name__}, got {value!r}",
                        filename=filename, where=where)
    if positive and kind in (int, float) and value <= 0:
        raise LoomError(f"must be > 0, got {value!r}", filename=filename, where=where)
    if kind in (int, float) and value < 0:
        raise LoomError(f"must be >= 0, got {value!r}", filename=filename, where=where)
    return value


def _no_unknown_keys(data: dict, known: tuple[str, ...], path: str, filename: str | None) -> None:
    """A misspelt key (``utilisation_limit``) would silently leave its default in place."""
    unknown = sorted(set(data) - set(known))
    if unknown:
        raise LoomError(f"unknown key {unknown[0]!r} (expected {', '.join(known)})", filename=filename,
                        where=f"{path}{unknown[0]}")


def load_platform(source: str | Path | dict) -> Platform:
    filename = None
    if isinstance(source, dict):
        data = source
    else:
        filename = str(source)
        data = read_json_file(filename, "platform description")
    name = _get(data, "name", "", str, filename)
    clock = _get(data, "clock_mhz", "", float, filename)
    res = _get(data, "resources", "", dict, filename)
    resources = {r: _get(res, r, "resources.", int, filename, positive=False) for r in RESOURCES}
    unknown = sorted(set(res) - set(RESOURCES))
    if unknown:
        raise LoomError(f"unknown resource {unknown[0]!r} (expected {', '.join(RESOURCES)})", filename=filename,
                        where=f"resources.{unknown[0]}")
    mem = _get(data, "memory", "", dict, filename)
    _no_unknown_keys(data, ("name", "clock_mhz", "resources", "memory", "utilization_limit"), "", filename)
    _no_unknown_keys(mem, ("channels", "width_bits", "clock_mhz"), "memory.", filename)
    channels = _get(mem, "channels", "memory.", int, filename)
    width = _get(mem, "width_bits", "memory.", int, filename)
    if width % 8:
        raise LoomError(f"must be a multiple of 8, got {width}", filename=filename, where="memory.width_bits")
    mclock = _get(mem, "clock_mhz", "memory.", float, filename)
    limit = data.get("utilization_limit", 0.8)
    if isinstance(limit, bool) or not isinstance(limit, (int, float)) or not 0 < limit <= 1:
        raise LoomError(f"expected a fraction in (0, 1], got {limit!r}", filename=filename,
                        where="utilization_limit")
    return Platform(name, clock, resources, channels, width, mclock, float(limit))


__all__ = ["Platform", "load_platform", "RESOURCES"]
