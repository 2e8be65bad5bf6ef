"""What ``loom build`` was given: the kind of input, found from its name and contents.

Kinds: ``kernel`` (a built-in example, ``file.py`` with ``@loom.kernel``s, ``file.py:name``, or
the functions of a ``.mlir`` file), ``ekl`` (``.ekl``), ``pipeline`` (a built-in app name or a
``.py`` app module with ``build``/``make_inputs``/``output_shape``), ``dataflow`` (a ``.mlir``
with ``dfg`` operations, or a ``.py`` defining ``graph()`` or ``module()`` + ``bindings()``)
and ``model`` (``.onnx``, ``.pt``, ``.pt2``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from loom.core.user_files import import_user_file, is_file
from loom.errors import LoomError

KINDS = ("kernel", "ekl", "pipeline", "dataflow", "model")
MODEL_SUFFIXES = (".onnx", ".pt", ".pt2")


@dataclass(frozen=True)
class BuildInput:
    kind: str
    source: str                     # as the user wrote it
    path: Path | None = None        # the file, None for built-ins
    name: str | None = None         # a selected kernel / function / built-in name
    module: ModuleType | None = None  # the imported .py file

    @property
    def label(self) -> str:
        return self.name or (self.path.stem if self.path else self.source)


def classify(source: str) -> BuildInput:
    from loom.examples.kernels import EXAMPLES
    from loom.examples.pipelines import app_names

    text = str(source)
    path, name = _split_selection(text)
    if path is None:
        if text in app_names():
            return BuildInput("pipeline", text, name=text)
        if text in EXAMPLES:
            return BuildInput("kernel", text, name=text)
        raise LoomError(f"no such file or built-in example: {text!r} (built-in kernels: {', '.join(sorted(EXAMPLES))}; "
                        f"pipelines: {', '.join(app_names())}; or a .py, .ekl, .mlir, "
                        f"{', '.join(MODEL_SUFFIXES)} file)")
    suffix = path.suffix.lower()
    if suffix == ".ekl":
        return BuildInput("ekl", text, path, name)
    if suffix in MODEL_SUFFIXES:
        return BuildInput("model", text, path, name)
    if suffix == ".mlir":
        return BuildInput("dataflow" if _has_dfg_ops(path) else "kernel", text, path, name)
    if suffix == ".py":
        return _classify_python(text, path, name)
    raise LoomError(f"cannot build a {suffix or 'suffix-less'} file: expected .py, .ekl, .mlir or "
                    f"{', '.join(MODEL_SUFFIXES)}", filename=str(path))


def _split_selection(text: str) -> tuple[Path | None, str | None]:
    """``file:name`` -> (file, name) when ``file`` exists; a plain existing file -> (file, None)."""
    if is_file(text):
        return Path(text), None
    head, sep, tail = text.rpartition(":")
    if sep and head and is_file(head):
        if not tail:
            raise LoomError(f"nothing after ':' in {text!r}: write FILE:NAME or just FILE")
        return Path(head), tail
    return None, None


def _has_dfg_ops(path: Path) -> bool:
    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError) as error:
        raise LoomError(f"cannot read: {error}", filename=str(path)) from None
    return "dfg." in text


def _classify_python(text: str, path: Path, name: str | None) -> BuildInput:
    from loom.examples.pipelines import REQUIRED
    from loom.jit import Kernel

    module = import_user_file(path)
    if callable(getattr(module, "graph", None)) or (callable(getattr(module, "module", None))
                                                     and callable(getattr(module, "bindings", None))):
        return BuildInput("dataflow", text, path, name, module)
    if all(callable(getattr(module, f, None)) for f in REQUIRED):
        return BuildInput("pipeline", text, path, name, module)
    if any(isinstance(v, Kernel) for v in vars(module).values()):
        return BuildInput("kernel", text, path, name, module)
    raise LoomError("nothing to build in this Python file: expected @loom.kernel functions, an image-pipeline app "
                    f"({', '.join(REQUIRED)}), or a dataflow graph (graph(), or module() + bindings())",
                    filename=str(path))
