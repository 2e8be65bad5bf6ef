"""Access to the example pipelines and numpy references for the streaming tests."""

import importlib.util
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def _load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def example(name):
    return _load(f"loom_streaming_example_{name}", ROOT / "examples" / "pipelines" / f"{name}.py")


references = _load("loom_streaming_app_references",
                   ROOT / "tests" / "frontends" / "pipeline" / "pipeline_app_references.py")
