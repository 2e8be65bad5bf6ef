"""Image-pipeline apps: one module each, holding the algorithm, its schedules and what a run needs.

The one loader of apps is here: ``load_app(name)`` and ``app_names()``, used by
``loom pipeline``, ``loom demo`` and the tests. Apps come from this package, or
from the folder named by ``$LOOM_PIPELINE_APPS`` (then only from there), or from a file
named directly (``loom pipeline ./my_app.py``).

The contract of an app module ``NAME.py`` (a user's folder follows the same one):

``build(schedule="accel", tile=(W, H), ...) -> (output Func, funcs)``
    ``schedule`` is ``"accel"`` (streamed through the accelerator in ``tile``-sized
    tiles) or ``"cpu"``; ``funcs`` is a dict of the pipeline's Funcs by name (may be
    empty). An app whose ``build`` also takes ``rate`` supports n pixels per cycle
    (``loom pipeline --unroll``); ``share``, a compute-sharing form (``--share``);
    ``glb_tile``, a two-level hierarchy (``--glb-tile``).
``make_inputs(size, rng) -> {param name: numpy array}``
    Random inputs for an output of ``size = (W, H)`` pixels, drawn from the
    ``numpy.random.Generator`` ``rng`` (arrays are stored with dims reversed).
``output_shape(size) -> tuple``
    The output extent for ``size``: ``(W, H)``, plus the channel count for
    multi-channel outputs, e.g. ``(W, H, 3)``.

The module docstring's first line is the description ``loom pipeline --list`` shows.
Names starting with ``_`` are not apps.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType

from loom.errors import LoomError

APPS_ENV = "LOOM_PIPELINE_APPS"
BUILTIN_DIR = Path(__file__).resolve().parent
REQUIRED = ("build", "make_inputs", "output_shape")

__all__ = ["APPS_ENV", "REQUIRED", "app_names", "apps_dir", "build_app_funcs", "load_app"]


def apps_dir() -> Path:
    """The folder the apps are read from: ``$LOOM_PIPELINE_APPS`` if set, else this package."""
    folder = os.environ.get(APPS_ENV)
    if not folder:
        return BUILTIN_DIR
    path = Path(folder)
    if not path.is_dir():
        raise LoomError(f"the pipeline apps folder {path} does not exist; set {APPS_ENV} to the folder "
                        f"holding the app modules (NAME.py with {', '.join(REQUIRED)})", where=f"${APPS_ENV}")
    return path


def app_names() -> list[str]:
    return sorted(p.stem for p in apps_dir().glob("*.py") if not p.stem.startswith("_"))


def load_app(name: str) -> ModuleType:
    """The app module ``name`` (or the file ``name`` when it ends in ``.py``), checked to provide the contract
    above."""
    if name.endswith(".py"):  # a user's own app file, wherever it is
        path = Path(name)
        if not path.is_file():
            problem = "is a folder, not a file" if path.is_dir() else "does not exist"
            raise LoomError(f"the pipeline app file {path} {problem}", where="loom pipeline")
        return _checked(_load_file(path.stem, path.resolve()))
    names = app_names()
    if name not in names:
        raise LoomError(f"unknown pipeline app '{name}': expected one of {', '.join(names) or '(none found)'}",
                        where="loom pipeline")
    folder = apps_dir()
    if folder == BUILTIN_DIR:
        module = importlib.import_module(f"{__name__}.{name}")
    else:
        module = _load_file(name, folder / f"{name}.py")
    return _checked(module)


def _checked(module: ModuleType) -> ModuleType:
    name = Path(module.__file__).stem
    missing = [attr for attr in REQUIRED if not callable(getattr(module, attr, None))]
    if missing:
        raise LoomError(f"pipeline app '{name}' does not define {', '.join(missing)} (every app module defines "
                        f"{', '.join(REQUIRED)}: see loom.examples.pipelines)", where=str(module.__file__))
    return module


def build_app_funcs(module: ModuleType, *args, **kwargs) -> tuple:
    """``module.build(*args, **kwargs)``, checked to return ``(output Func, funcs)``. In a user's folder, an
    exception raised in ``build`` is a LoomError naming the app's file and the line that raised, as one raised
    while it imports (loom's own apps keep their traceback: an error there is loom's)."""
    from loom.frontends.pipeline import Func

    path = Path(module.__file__)
    name = path.stem
    try:
        result = module.build(*args, **kwargs)
    except LoomError:
        raise
    except Exception as e:
        if path.resolve().parent == BUILTIN_DIR:
            raise
        raise LoomError(f"build raised {type(e).__name__}: {e}", filename=str(path),
                        line=_user_line(e, path), where=f"pipeline app '{name}'") from None
    if not (isinstance(result, tuple) and len(result) == 2 and isinstance(result[0], Func)
            and isinstance(result[1], dict)):
        got = (f"a tuple of {len(result)}" if isinstance(result, tuple) and len(result) != 2
               else f"({', '.join(type(v).__name__ for v in result)})" if isinstance(result, tuple)
               else f"a {type(result).__name__}")
        line = getattr(getattr(module.build, "__code__", None), "co_firstlineno", None)
        raise LoomError(f"build must return (output Func, {{name: Func}}) (the Funcs by "
                        f"name may be empty: `return out, {{}}`), got {got}", filename=str(path), line=line,
                        where=f"pipeline app '{name}'")
    return result


def _load_file(name: str, path: Path) -> ModuleType:
    """The app module at ``path``; its folder is importable while it loads (helpers such as ``_common.py``
    beside the apps). An app that does not import is a LoomError naming the file and line."""
    module_name = f"loom_pipeline_app_{name}"
    spec = importlib.util.spec_from_file_location(module_name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module  # dataclasses and pickling look the module up by name
    folder = str(path.parent)
    added = folder not in sys.path
    if added:
        sys.path.insert(0, folder)
    try:
        spec.loader.exec_module(module)
    except LoomError:
        del sys.modules[module_name]
        raise
    except Exception as e:  # the user's module: say which file and why, not a traceback from here
        del sys.modules[module_name]
        line = getattr(e, "lineno", None) or _user_line(e, path)
        raise LoomError(f"pipeline app '{name}' does not import: {type(e).__name__}: {e}",
                        filename=str(path), line=line, where=f"pipeline app '{name}'") from None
    finally:
        if added:
            sys.path.remove(folder)
    return module


def _user_line(error: BaseException, path: Path):
    """The line of ``path`` the error's traceback passed last (None if it did not)."""
    tb, line = error.__traceback__, None
    while tb is not None:
        if Path(tb.tb_frame.f_code.co_filename).resolve() == path.resolve():
            line = tb.tb_lineno
        tb = tb.tb_next
    return line
