"""A ``loom build`` project: several inputs, each with its own options, in one JSON file.

    loom build PROJECT.json       (or a folder holding ``loom-project.json``)

    {"format": "loom-project/1",
     "output": "generated",                     # optional; relative to the project file's folder
     "threads": 2,                              # optional: units built in parallel, per build
     "defaults": {"target": "all", "dims": {"N": 16}},     # optional: options every build starts from
     "builds": [
        {"input": "kernels/vapour.ekl", "target": "hls", "format": "e4m3fn", "overflow": "saturate",
         "ranges": {"T": [273.15, 302.0]}},
        {"input": "graph.py", "name": "sensors"},
        {"input": "matmul_loops", "accel": "acc.json", "accel_name": "v3_16", "flow": "As"},
        {"input": "gaussian", "size": [64, 48]},
        {"input": "cnn.onnx", "input_shapes": [[1, 3, 16, 16]]}]}

Each build is an ordinary ``loom build`` of its input into ``OUTPUT/NAME/`` (NAME defaults to the input's
label). Files are relative to the project file. Every key is checked before anything is built: an unknown
key, a value of the wrong type, a missing file, a bad format name or mode is a LoomError naming the
project file and the JSON path (``builds[1].format``).
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from pathlib import Path

from loom.build.options import TARGETS, BuildOptions
from loom.core.json_text import read_json_file
from loom.core.user_files import is_dir, is_file
from loom.errors import LoomError

FORMAT = "loom-project/1"
PROJECT_FILE = "loom-project.json"
_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$")


@dataclass(frozen=True)
class ProjectBuild:
    name: str             # the output subfolder
    input: str            # a file path (resolved against the project folder, with any ':NAME') or built-in name
    options: BuildOptions
    where: str            # its JSON path, for errors raised while it builds


@dataclass(frozen=True)
class Project:
    path: Path
    output: Path
    builds: tuple[ProjectBuild, ...]


def is_project(source: str | Path) -> bool:
    """A ``.json`` file, or a folder holding ``loom-project.json``."""
    path = Path(source)
    return path.suffix.lower() == ".json" or (is_dir(path) and is_file(path / PROJECT_FILE))


def load_project(source: str | Path) -> Project:
    path = Path(source)
    if is_dir(path):
        path = path / PROJECT_FILE
    if not is_file(path):
        raise LoomError(f"no such project file: {path}")
    data = read_json_file(str(path), "the project file")
    checker = _Checker(path)
    checker.object(data, "", required=("format", "builds"), allowed=("format", "output", "threads", "defaults",
                                                                      "builds"))
    if data["format"] != FORMAT:
        checker.fail("format", f"expected {FORMAT!r}, got {data['format']!r}")
    threads = checker.positive_int(data["threads"], "threads") if "threads" in data else None
    defaults = data.get("defaults", {})
    checker.object(defaults, "defaults", allowed=_OPTION_KEYS)
    builds = data["builds"]
    if not isinstance(builds, list) or not builds:
        checker.fail("builds", f"expected a non-empty list of builds, got {_describe(builds) if builds else 'none'}")
    output = checker.string(data.get("output", "generated"), "output")
    project_builds: list[ProjectBuild] = []
    for k, entry in enumerate(builds):
        where = f"builds[{k}]"
        checker.object(entry, where, required=("input",), allowed=("input", "name", *_OPTION_KEYS))
        values = {**defaults, **entry}
        source, label = checker.input(entry["input"], f"{where}.input")
        name = entry.get("name", re.sub(r"[^A-Za-z0-9_.-]", "_", label))
        if not isinstance(name, str) or not _NAME.match(name):
            checker.fail(f"{where}.name", f"expected a folder name (letters, digits, '_', '.', '-'), got {name!r}")
        clash = [b for b in project_builds if b.name == name]
        if clash:
            checker.fail(f"{where}.name" if "name" in entry else f"{where}.input",
                         f"two builds write into {name!r} (also {clash[0].where}); give one a 'name'")
        options = checker.options(values, where, entry, threads)
        project_builds.append(ProjectBuild(name, source, options, where))
    return Project(path, (path.parent / output), tuple(project_builds))


def build_project(source: str | Path, output: str | Path | None = None, threads: int | None = None) -> list:
    """Build every entry of the project into ``output`` (default: the project's own) / NAME; ``threads`` (as
    ``loom build --threads``) overrides the project's. Returns the BuildResults in order. A failing build is
    re-raised naming its entry."""
    from loom.build.api import build

    project = load_project(source)
    root = Path(output) if output is not None else project.output
    results = []
    for entry in project.builds:
        options = entry.options if threads is None else dataclasses.replace(entry.options, threads=threads)
        try:
            results.append(build(entry.input, root / entry.name, options))
        except LoomError as error:  # a command-line flag in the message is the entry's key here
            key = _FLAG_KEYS.get(error.where or "")
            where = f"{entry.where}.{key} ({entry.name})" if key else \
                f"{entry.where} ({entry.name})" + (f" {error.where}" if error.where else "")
            raise LoomError(error.message, filename=error.filename or str(project.path), line=error.line,
                            column=error.column, where=where, construct=error.construct) from None
    return results


# ---- checking the JSON

_FLAG_KEYS = {"--range": "ranges", "--dims": "dims", "dims": "dims", "--target": "target", "--format": "format", "--accel": "accel",
              "--name": "accel_name", "--flow": "flow", "--size": "size", "--input-shape": "input_shapes",
              "-o": "name"}

_OPTION_KEYS = ("target", "accel", "accel_name", "flow", "dims", "size", "check", "seed", "input_shapes", "ranges",
                "format", "rounding", "overflow")


def _describe(value) -> str:
    kind = {dict: "an object", list: "a list", str: "a string", bool: "a bool", int: "an integer",
            float: "a number", type(None): "null"}.get(type(value), type(value).__name__)
    return f"{kind} {value!r:.40}" if not isinstance(value, (dict, list)) else kind


class _Checker:
    def __init__(self, path: Path):
        self.path = path

    def fail(self, where: str, message: str):
        raise LoomError(message, filename=str(self.path), where=where or "(top level)")

    def object(self, value, where: str, required=(), allowed=()) -> None:
        if not isinstance(value, dict):
            self.fail(where, f"expected an object, got {_describe(value)}")
        for key in value:
            if key not in allowed:
                self.fail(f"{where}.{key}".lstrip("."), f"unknown key {key!r} (expected one of {', '.join(allowed)})")
        for key in required:
            if key not in value:
                self.fail(where, f"missing key {key!r}")

    def string(self, value, where: str) -> str:
        if not isinstance(value, str) or not value:
            self.fail(where, f"expected a non-empty string, got {_describe(value)}")
        return value

    def positive_int(self, value, where: str) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            self.fail(where, f"expected a positive integer, got {_describe(value)}")
        return value

    def bounds(self, value, where: str) -> tuple[float, float]:
        if (not isinstance(value, list) or len(value) != 2
                or any(isinstance(b, bool) or not isinstance(b, (int, float)) for b in value)):
            self.fail(where, f"expected [LO, HI] (numbers), got {_describe(value)}")
        if not value[0] < value[1]:
            self.fail(where, f"expected LO < HI (the range is [LO, HI)), got {value}")
        return (value[0], value[1])

    def file(self, value, where: str) -> str:
        text = self.string(value, where)
        path = self.path.parent / text
        if not is_file(path):
            self.fail(where, f"no such file: {text} (looked for {path})")
        return str(path)

    def input(self, value, where: str) -> tuple[str, str]:
        """(source, label): a file relative to the project (``FILE`` or ``FILE:NAME``; label the file's stem or
        NAME), else a built-in name."""
        from loom.examples.kernels import EXAMPLES
        from loom.examples.pipelines import app_names

        text = self.string(value, where)
        head, sep, tail = text.rpartition(":")
        if is_file(self.path.parent / text):
            return str(self.path.parent / text), Path(text).stem
        if sep and head and is_file(self.path.parent / head):
            if not tail:
                self.fail(where, f"nothing after ':' in {text!r}: write FILE:NAME or just FILE")
            return f"{self.path.parent / head}:{tail}", tail
        if text in EXAMPLES or text in app_names():
            return text, text
        self.fail(where, f"no such file or built-in example: {text} (files are relative to {self.path.parent})")

    def options(self, values: dict, where: str, entry: dict, threads: int | None) -> BuildOptions:
        def at(key: str) -> str:  # the path of a value: the entry's own, else the defaults'
            return f"{where}.{key}" if key in entry else f"defaults.{key}"

        kwargs: dict = {}
        if "target" in values:
            if values["target"] not in TARGETS:
                self.fail(at("target"), f"expected one of {', '.join(TARGETS)}, got {_describe(values['target'])}")
            kwargs["target"] = values["target"]
        if "accel" in values:
            kwargs["accel"] = self.file(values["accel"], at("accel"))
        for key in ("accel_name", "flow", "format", "rounding", "overflow"):
            if key in values:
                kwargs["number_format" if key == "format" else key] = self.string(values[key], at(key))
        if "dims" in values:
            dims = values["dims"]
            if not isinstance(dims, dict):
                self.fail(at("dims"), f"expected an object of dim sizes like {{\"N\": 64}}, got {_describe(dims)}")
            kwargs["dims"] = {k: self.positive_int(v, f"{at('dims')}.{k}") for k, v in dims.items()}
        if "size" in values:
            size = values["size"]
            if not isinstance(size, list) or len(size) != 2:
                self.fail(at("size"), f"expected [width, height], got {_describe(size)}")
            kwargs["size"] = tuple(self.positive_int(v, f"{at('size')}[{i}]") for i, v in enumerate(size))
        if "check" in values:
            if not isinstance(values["check"], bool):
                self.fail(at("check"), f"expected true or false, got {_describe(values['check'])}")
            kwargs["check"] = values["check"]
        if "seed" in values:
            seed = values["seed"]
            if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
                self.fail(at("seed"), f"expected a non-negative integer, got {_describe(seed)}")
            kwargs["seed"] = seed
        if "input_shapes" in values:
            shapes = values["input_shapes"]
            if not isinstance(shapes, list):
                self.fail(at("input_shapes"), f"expected a list of shapes like [[1, 3, 32, 32]], got {_describe(shapes)}")
            checked = []
            for i, shape in enumerate(shapes):
                if not isinstance(shape, list) or not shape:
                    self.fail(f"{at('input_shapes')}[{i}]", f"expected a non-empty list of sizes, got {_describe(shape)}")
                checked.append(tuple(self.positive_int(d, f"{at('input_shapes')}[{i}][{j}]")
                                     for j, d in enumerate(shape)))
            kwargs["input_shapes"] = tuple(checked)
        if "ranges" in values:
            ranges = values["ranges"]
            if not isinstance(ranges, dict):
                self.fail(at("ranges"), f"expected an object like {{\"T\": [160, 340]}}, got {_describe(ranges)}")
            kwargs["ranges"] = {k: self.bounds(v, f"{at('ranges')}.{k}") for k, v in ranges.items()}
        if threads is not None:
            kwargs["threads"] = threads
        try:
            return BuildOptions(**kwargs)
        except LoomError as error:  # a format name or mode, a target without its accelerator, ...
            key = {"--target": "target", "--format": "format", "--range": "ranges"}.get(error.where or "")
            if key == "format" and error.message.split()[0] in ("rounding", "overflow"):
                key = error.message.split()[0]
            if key is not None and key not in values:  # --format refused modes given without a format
                key = "rounding" if "rounding" in values else "overflow"
            self.fail(at(key) if key else where, error.message)
