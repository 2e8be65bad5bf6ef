"""Variant bundles ("climbs", EVEREST basecamp §6.3): one application with several built variants.

The seed's Listing 2 works as written::

    from loom.build import climbs
    climbs.create("accelerated_app", "app_v1/")      # Climb app_v1/accelerated_app.climb created successfully.
    climbs.add_file("app/app.py", "python", "app_v1/accelerated_app.climb")
    climbs.add_file("app/data/", "copy", ...)         # folders are copied recursively
    climbs.add_module("build_cpu/variant.section", ...)   # a `loom build` output (CPU-only, accelerated)
    climbs.emit("app_v1/accelerated_app.climb")

``emit`` writes the bundle: the application's files under ``app/``, every variant under
``variants/NAME/``, ``deploy_check.py`` (which variants can run here, and why not),
``invoke_NAME.py`` per variant (how to call it) and ``climb.json`` (the manifest). Python files
may mark the regions a variant replaces with ``# @loom climbs accelerate begin`` /
``# @loom climbs accelerate end`` and where to initialise it with ``# @loom climbs init``
(``@basecamp`` is accepted for ``@loom``); the manifest lists them by line.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from loom.build.deploy import VariantCheck, check_variant
from loom.build.json_files import read_format_file
from loom.build.section import read_section
from loom.errors import LoomError

FORMAT = "loom-climb/1"
LANGUAGES = ("python", "docker", "copy")
_ANNOTATION = re.compile(r"#\s*@(?:loom|basecamp)\s+climbs\s+(init|accelerate\s+begin|accelerate\s+end)\b")


def create(name: str, directory: str | Path, *, quiet: bool = False) -> Path:
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.-]*", name or ""):
        raise LoomError(f"climb name {name!r}: expected letters, digits, '_', '-', '.'", where="create")
    path = Path(directory) / f"{name}.climb"
    if path.exists():
        raise LoomError(f"{path} already exists", where="create")
    path.parent.mkdir(parents=True, exist_ok=True)
    _save(path, {"format": FORMAT, "name": name, "files": [], "modules": []})
    _say(f"Climb {_shown(directory, name)} created successfully.", quiet)
    return path


def add_file(file: str | Path, language: str, climb_file: str | Path, *, quiet: bool = False) -> None:
    climb = _load(climb_file)
    if language not in LANGUAGES:
        raise LoomError(f"unknown language {language!r}; expected one of {', '.join(LANGUAGES)} "
                        "(copy: the file is copied without change)", where="--language")
    source = Path(file)
    if not source.exists():
        raise LoomError(f"no such file or folder: {source}", where="add_file")
    if source.is_dir() and language != "copy":
        raise LoomError(f"{source} is a folder: only 'copy' takes folders (copied recursively)", where="--language")
    entry = {"path": str(source.resolve()), "name": source.name, "language": language,
             "folder": source.is_dir(), "annotations": _annotations(source) if language == "python" else []}
    if any(f["name"] == entry["name"] for f in climb["files"]):
        raise LoomError(f"the climb already has a file named {entry['name']}", where="add_file")
    climb["files"].append(entry)
    _save(Path(climb_file), climb)
    _say(f"Added {source} ({language}) to {climb_file}.", quiet)


def add_module(section: str | Path, climb_file: str | Path, *, name: str | None = None, quiet: bool = False) -> None:
    """Add a built variant: a ``loom build`` output folder or its ``variant.section`` file."""
    climb = _load(climb_file)
    root, content = read_section(section)
    variant = name or f"{content['name']}_{content['variant']}"
    if any(m["name"] == variant for m in climb["modules"]):
        raise LoomError(f"the climb already has a variant named {variant} (give another name)", where="add_module")
    climb["modules"].append({"name": variant, "variant": content["variant"], "build": str(root.resolve())})
    _save(Path(climb_file), climb)
    _say(f"Added variant {variant} ({content['variant']}) to {climb_file}.", quiet)


def emit(climb_file: str | Path, output_directory: str | Path | None = None, *, quiet: bool = False) -> Path:
    climb = _load(climb_file)
    if not climb["modules"]:
        raise LoomError("the climb has no variant: add one with add_module", where="emit")
    out = Path(output_directory) if output_directory else Path(climb_file).parent / f"{climb['name']}_build"
    if out.exists():
        shutil.rmtree(out) if (out / "climb.json").is_file() else _refuse(out)
    for entry in climb["files"]:
        source = Path(entry["path"])
        if not source.exists():
            raise LoomError(f"{source} (added to the climb) no longer exists", where="emit")
        target = out / "app" / entry["name"]
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copytree(source, target) if entry["folder"] else shutil.copy2(source, target)
    variants = []
    for module in climb["modules"]:
        shutil.copytree(module["build"], out / "variants" / module["name"])
        _, section = read_section(out / "variants" / module["name"])
        variants.append({**module, "build": f"variants/{module['name']}", "units": section["units"]})
        (out / f"invoke_{module['name']}.py").write_text(_invocation(module["name"], section))
    manifest = {"format": FORMAT, "name": climb["name"], "files": [
        {k: v for k, v in f.items() if k != "path"} for f in climb["files"]], "variants": variants}
    (out / "climb.json").write_text(json.dumps(manifest, indent=2) + "\n")
    (out / "deploy_check.py").write_text(_DEPLOY_CHECK)
    _say(f"Climb {climb['name']} emitted to {out} ({len(variants)} variants: "
         f"{', '.join(v['name'] for v in variants)}).", quiet)
    return out


def check(bundle: str | Path) -> list[VariantCheck]:
    """Which variants of an emitted bundle can be deployed here, and why not."""
    try:
        manifest = json.loads((Path(bundle) / "climb.json").read_text())
    except (OSError, ValueError) as error:
        raise LoomError(f"{bundle} is not an emitted climb bundle (climb.json: {error})") from None
    return [check_variant(Path(bundle) / v["build"], v["name"]) for v in manifest["variants"]]


# ------------------------------------------------------------------------------ helpers
def _load(climb_file: str | Path) -> dict:
    path = Path(climb_file)
    climb = read_format_file(path, FORMAT, "climb file", "create it first")
    if not isinstance(climb.get("name"), str):
        raise LoomError("expected the climb's name (a string)", filename=str(path), where="name")
    for key, fields in (("files", ("path", "name", "language")), ("modules", ("name", "variant", "build"))):
        entries = climb.get(key)
        if not isinstance(entries, list) or not all(
                isinstance(e, dict) and all(isinstance(e.get(f), str) for f in fields) for e in entries):
            raise LoomError(f"expected a list of entries with {', '.join(fields)}", filename=str(path), where=key)
    return climb


def _save(path: Path, climb: dict) -> None:
    path.write_text(json.dumps(climb, indent=2) + "\n")


def _shown(directory, name: str) -> str:
    text = str(directory)
    return f"{text}{'' if text.endswith('/') else '/'}{name}.climb"


def _say(message: str, quiet: bool) -> None:
    if not quiet:
        print(message)


def _refuse(out: Path):
    raise LoomError(f"{out} exists and is not an emitted climb: choose another output directory",
                    where="--output-directory")


def _annotations(path: Path) -> list[dict]:
    """The climb annotations of a Python file; begin/end must pair up."""
    found, open_line = [], None
    for number, text in enumerate(path.read_text(errors="replace").splitlines(), 1):
        m = _ANNOTATION.search(text)
        if not m:
            continue
        kind = " ".join(m.group(1).split())
        if kind == "accelerate begin":
            if open_line is not None:
                raise LoomError(f"'accelerate begin' inside the region begun at line {open_line}",
                                filename=str(path), line=number)
            open_line = number
        elif kind == "accelerate end":
            if open_line is None:
                raise LoomError("'accelerate end' without 'accelerate begin'", filename=str(path), line=number)
            open_line = None
        found.append({"line": number, "annotation": kind})
    if open_line is not None:
        raise LoomError("'accelerate begin' is never ended", filename=str(path), line=open_line)
    return found


def _invocation(name: str, section: dict) -> str:
    lines = [f'"""How to call variant {name} ({section["variant"]}) of this bundle from Python."""',
             "from pathlib import Path", "", "from loom.build.deploy import load_unit", "",
             f'VARIANT = Path(__file__).with_name("variants") / "{name}"', ""]
    for unit in section["units"]:
        if unit.get("library") or unit.get("accelerator"):
            ident = re.sub(r"\W", "_", unit["name"])
            lines.append(f'{ident} = load_unit(VARIANT, "{unit["name"]}")  # a callable on numpy arrays')
    return "\n".join(lines) + "\n"


_DEPLOY_CHECK = '''"""Which variants of this bundle can be deployed here (exit status 0 if at least one can)."""
import sys
from pathlib import Path

from loom.build import climbs

results = climbs.check(Path(__file__).parent)
for result in results:
    print(result.line())
sys.exit(0 if any(r.deployable for r in results) else 1)
'''
