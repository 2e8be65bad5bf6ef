"""Can a built variant run here? The deployability check of a climb bundle, and loading a variant.

A variant is deployable when every file its build index lists is present and unchanged
(sha256), its compiled libraries load, and each accelerator it targets can be reached: its
description is there and validates, and loom has a simulator model for it (or, on a board, the
platform's DMA device is present). Each "no" comes with the reasons.
"""

from __future__ import annotations

import ctypes
import hashlib
from dataclasses import dataclass, field
from pathlib import Path

from loom.build.folder import read_index
from loom.build.section import read_section
from loom.errors import LoomError


@dataclass
class VariantCheck:
    name: str
    variant: str
    reasons: list[str] = field(default_factory=list)  # why it cannot be deployed (empty: it can)

    @property
    def deployable(self) -> bool:
        return not self.reasons

    def line(self) -> str:
        verdict = "yes" if self.deployable else "no: " + "; ".join(self.reasons)
        return f"{self.name} ({self.variant}): deployable {verdict}"


def check_variant(folder: str | Path, name: str | None = None) -> VariantCheck:
    root, section = read_section(folder)
    result = VariantCheck(name or section["name"], section["variant"])
    try:
        index = read_index(root)
    except LoomError as error:
        result.reasons.append(str(error))
        return result
    for artifact in index["artifacts"]:
        path = root / artifact["path"]
        if not path.is_file():
            result.reasons.append(f"missing file {artifact['path']}")
        elif hashlib.sha256(path.read_bytes()).hexdigest() != artifact["sha256"]:
            result.reasons.append(f"{artifact['path']} changed since the build")
    for unit in section["units"]:
        if unit.get("library") and (root / unit["library"]).is_file():
            try:
                ctypes.CDLL(str(root / unit["library"]))
            except OSError as error:
                result.reasons.append(f"{unit['library']} does not load here: {error}")
        if unit.get("accelerator"):
            result.reasons += _accelerator_reasons(root, unit["accelerator"])
    return result


def _accelerator_reasons(root: Path, accelerator: dict) -> list[str]:
    from loom.accel import load_description
    from loom.driver.compile import simulator_model

    path = root / accelerator["description"]
    if not path.is_file():
        return [f"accelerator description {accelerator['description']} is missing"]
    try:
        system = load_description(str(path))
        acc = system.accelerator(accelerator["name"])
        simulator_model(acc)
    except LoomError as error:
        return [f"accelerator {accelerator['name']} cannot run here: {error.message}"]
    return []


def load_unit(variant: str | Path, unit_name: str):
    """A callable for one unit of a built variant, from the files it carries: the shared object
    (no C compiler needed) or, for an accelerated unit, the driver rebuilt from its IR."""
    root, section = read_section(variant)
    unit = next((u for u in section["units"] if u["name"] == unit_name), None)
    if unit is None:
        raise LoomError(f"variant {section['name']} has no unit {unit_name!r} "
                        f"(has: {', '.join(u['name'] for u in section['units'])})")
    if unit.get("accelerator"):
        from loom.driver.compile import compile_driver

        acc = unit["accelerator"]
        return compile_driver(_parse(root / unit["frontend_ir"]), str(root / acc["description"]), acc["name"],
                              acc["flow"])
    if not (unit.get("library") and unit.get("lowered_ir")):
        raise LoomError(f"unit {unit_name} of variant {section['name']} has no compiled library to load")
    from loom.backends.c import CompiledModule
    from loom.backends.c.emitter import lower_module

    program = lower_module(_parse(root / unit["lowered_ir"]), checked=unit["checked"], native=unit["native"])
    return CompiledModule(program.source, root / unit["library"], program.signatures, program.sites,
                          program.restrict).function(unit["function"])


def _parse(path: Path):
    from loom.dialects import context
    from loom.dialects.parsing import text_parser

    try:
        return text_parser(context(), path.read_text(), str(path)).parse_module()
    except Exception as error:  # noqa: BLE001 - unreadable or edited files of a bundle
        raise LoomError(f"cannot read the variant's IR: {str(error).strip().splitlines()[0]}",
                        filename=str(path)) from None
