"""Load the example pipelines and their numpy references by path (examples/ is not a package)."""

import importlib.util
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[3]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def _load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def example(name):
    return _load(f"loom_example_{name}", ROOT / "examples" / "pipelines" / f"{name}.py")


references = _load("loom_pipeline_app_references", pathlib.Path(__file__).with_name("pipeline_app_references.py"))
