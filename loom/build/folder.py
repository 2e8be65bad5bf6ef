"""The output folder of ``loom build``: artifacts written under it, listed in an index.

Layout (documented in ``docs/build.md``)::

    OUT/index.json     every artifact: path, unit, kind, stage, description, bytes, sha256; the
                       input, its kind, the options, each unit's checks; loom's version
    OUT/INDEX.md       the same as a table, for people
    OUT/UNIT/...       one folder per built unit (a kernel, a pipeline, a graph, a model)

A folder is only written over when it is empty or holds an earlier ``loom build`` (its
``index.json`` says so): ``-o`` onto a folder of other files is an error, so a typo cannot
clobber a user's work.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from dataclasses import asdict, dataclass, field
from pathlib import Path

from loom.errors import LoomError

INDEX_JSON = "index.json"
INDEX_MD = "INDEX.md"
INCOMPLETE = "incomplete"  # index.json key of a build that has not finished (or failed)
FORMAT = "loom-build/1"


@dataclass(frozen=True)
class Artifact:
    path: str          # relative to the output folder, '/' separated
    unit: str          # the kernel / pipeline / graph it belongs to
    kind: str          # mlir, c, c++, shared-object, report, json, hls, driver, testbench...
    stage: str         # the pipeline stage it comes from (frontend, loops, c, ...) or ''
    description: str
    bytes: int
    sha256: str


@dataclass
class UnitRecord:
    name: str
    kind: str
    checks: list[str] = field(default_factory=list)    # one line per check run and its outcome
    notes: list[str] = field(default_factory=list)     # what was not built, and why


class OutputFolder:
    def __init__(self, root: str | Path):
        self.root = Path(root)
        self.artifacts: list[Artifact] = []
        self.units: dict[str, UnitRecord] = {}
        self.facts: dict[str, dict] = {}  # unit -> what loading it needs (accelerator, C flags), for the section
        self._prepare()

    def _prepare(self) -> None:
        if self.root.exists() and not self.root.is_dir():
            raise LoomError(f"{self.root} exists and is not a folder", where="-o")
        if self.root.is_dir() and any(self.root.iterdir()):
            if not _is_loom_build(self.root / INDEX_JSON):
                raise LoomError(f"{self.root} is not empty and not the output of an earlier loom build "
                                f"(no {INDEX_JSON} of ours): choose another folder", where="-o")
            for child in self.root.iterdir():  # an earlier build: replace it whole, no stale files left
                shutil.rmtree(child) if child.is_dir() else child.unlink()
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            # claimed before any artifact: a build that fails half-way leaves a folder the next build may replace
            (self.root / INDEX_JSON).write_text(json.dumps({"format": FORMAT, INCOMPLETE: True}) + "\n")
        except OSError as error:
            raise LoomError(f"cannot create {self.root}: {error.strerror or error}", where="-o") from None

    def unit(self, name: str, kind: str) -> UnitRecord:
        if name not in self.units:
            self.units[name] = UnitRecord(name, kind)
        return self.units[name]

    def write(self, unit: str, relpath: str, content: str | bytes, *, kind: str, stage: str = "",
              description: str = "") -> Path:
        data = content.encode() if isinstance(content, str) else content
        path = self.root / unit / relpath
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        except OSError as error:
            raise LoomError(f"cannot write {path}: {error.strerror or error}", where="-o") from None
        self.artifacts.append(Artifact(f"{unit}/{relpath}", unit, kind, stage, description, len(data),
                                       hashlib.sha256(data).hexdigest()))
        return path

    def copy(self, unit: str, relpath: str, source: Path, *, kind: str, stage: str = "",
             description: str = "") -> Path:
        return self.write(unit, relpath, Path(source).read_bytes(), kind=kind, stage=stage, description=description)

    def finish(self, meta: dict) -> dict:
        """Write index.json and INDEX.md; return the index."""
        index = {"format": FORMAT, **meta,
                 "units": [asdict(u) for u in self.units.values()],
                 "artifacts": [asdict(a) for a in self.artifacts]}
        (self.root / INDEX_JSON).write_text(json.dumps(index, indent=2) + "\n")
        (self.root / INDEX_MD).write_text(_markdown(index))
        return index


def _is_loom_build(index: Path) -> bool:
    try:
        return json.loads(index.read_text()).get("format") == FORMAT
    except (OSError, ValueError, AttributeError):
        return False


def read_index(folder: str | Path) -> dict:
    """The index of a ``loom build`` output folder (LoomError if it is not one)."""
    path = Path(folder) / INDEX_JSON
    if not _is_loom_build(path):
        raise LoomError(f"{folder} is not a loom build output folder (no {INDEX_JSON} of format {FORMAT})")
    index = json.loads(path.read_text())
    if index.get(INCOMPLETE):
        raise LoomError(f"the loom build in {folder} did not finish (it failed or is still running): build again")
    return index


def _markdown(index: dict) -> str:
    lines = [f"# loom build of `{index['input']}` ({index['input_kind']})", "",
             f"loom {index['loom_version']}, target {index['target']}, threads {index['threads']}, "
             f"built in {index['seconds']:.2f} s", ""]
    for unit in index["units"]:
        lines.append(f"## {unit['name']} ({unit['kind']})")
        lines += [f"- check: {c}" for c in unit["checks"]] + [f"- note: {n}" for n in unit["notes"]]
        lines += ["", "| file | kind | stage | what |", "|---|---|---|---|"]
        lines += [f"| [{a['path']}]({a['path']}) | {a['kind']} | {a['stage']} | {a['description']} |"
                  for a in index["artifacts"] if a["unit"] == unit["name"]]
        lines.append("")
    return "\n".join(lines)
