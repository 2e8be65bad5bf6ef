"""The ``variant.section`` file ``loom build`` writes: one built variant of an application, as
``loom climb add-module`` takes it (the seed's ``.section`` files from the compile flows).

It names the variant (``cpu`` or ``accelerated``), each unit's compiled library, entry function
and frontend IR, and the accelerator the variant needs (its description is copied into the
build folder, so the variant carries everything it needs).
"""

from __future__ import annotations

import json
from pathlib import Path

from loom.build.json_files import read_format_file
from loom.errors import LoomError

SECTION = "variant.section"
FORMAT = "loom-section/1"
DESCRIPTION_COPY = "accelerator.json"


def write_section(folder, label: str, index: dict) -> Path:
    """Write OUT/variant.section for the finished build in ``folder`` (an OutputFolder)."""
    root = folder.root
    units = []
    for unit in index["units"]:
        mine = [a for a in index["artifacts"] if a["unit"] == unit["name"]]
        facts = folder.facts.get(unit["name"], {})
        accelerator = facts.get("accelerator")
        if accelerator is not None:  # the variant carries its accelerator's description
            copy = f"{unit['name']}/driver/{DESCRIPTION_COPY}"
            (root / copy).write_text(standalone_description(accelerator["description"], accelerator["name"]))
            accelerator = {**accelerator, "description": copy}
        # a model is one object per layer function, run by loom.models' runtime: no single entry to load
        callable_unit = unit["kind"] != "model"
        units.append({"name": unit["name"], "kind": unit["kind"],
                      "function": unit["name"].rsplit(".", 1)[-1],
                      "library": next((a["path"] for a in mine if a["kind"] == "shared-object" and callable_unit),
                                      None),
                      "lowered_ir": next((a["path"] for a in mine if a["stage"] == "lowered" and callable_unit),
                                         None),
                      "frontend_ir": next((a["path"] for a in mine if a["stage"] in ("frontend", "esn")), None),
                      "checked": facts.get("checked", False), "native": facts.get("native", False),
                      "accelerator": accelerator})
    variant = "accelerated" if any(u["accelerator"] for u in units) else "cpu"
    section = {"format": FORMAT, "name": label, "variant": variant, "input_kind": index["input_kind"],
               "units": units}
    path = root / SECTION
    path.write_text(json.dumps(section, indent=2) + "\n")
    return path


def standalone_description(path: str, accelerator: str) -> str:
    """The accelerator's description with its host section inlined (no file references left)."""
    from loom.passes.accel_ir import embed_description, read_description_file

    _, raw = read_description_file(path)
    return json.dumps(embed_description(raw, path, accelerator).content, indent=2) + "\n"


def read_section(path: str | Path) -> tuple[Path, dict]:
    """(build folder, section) from a ``variant.section`` file or the build folder holding one."""
    path = Path(path)
    if path.is_dir():
        path = path / SECTION
    section = read_format_file(path, FORMAT, "section file", f"loom build writes OUT/{SECTION}")
    _check_fields(section, path)
    return path.parent, section


_UNIT_FIELDS = {"name": str, "kind": str, "function": str, "library": (str, type(None)),
                "lowered_ir": (str, type(None)), "frontend_ir": (str, type(None)), "checked": bool, "native": bool,
                "accelerator": (dict, type(None))}


def _check_fields(section: dict, path: Path) -> None:
    """A hand-edited or damaged section is a located error, not a KeyError later."""
    def fail(where: str, expected: str):
        raise LoomError(f"expected {expected}", filename=str(path), where=where)

    for key in ("name", "variant"):
        if not isinstance(section.get(key), str):
            fail(key, "a string")
    if not isinstance(section.get("units"), list):
        fail("units", "a list of units")
    for k, unit in enumerate(section["units"]):
        if not isinstance(unit, dict):
            fail(f"units[{k}]", "an object")
        for key, kind in _UNIT_FIELDS.items():
            if not isinstance(unit.get(key), kind):
                fail(f"units[{k}].{key}", f"{key} of type {kind}")
        acc = unit["accelerator"]
        if acc is not None and not all(isinstance(acc.get(key), str) for key in ("description", "name", "flow")):
            fail(f"units[{k}].accelerator", "description, name and flow strings")
