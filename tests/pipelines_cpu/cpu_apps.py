"""The example pipelines, their numpy references and random inputs, for the CPU-path tests."""

import importlib.util
import pathlib
import sys
import zlib

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

APPS = ["pointwise", "gaussian", "cascade", "harris", "unsharp", "camera_pipeline", "conv_layer", "gemm"]
CHANNELS = {"unsharp": 3, "camera_pipeline": 3, "conv_layer": 4}


def _load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def example(name):
    return _load(f"loom_cpu_example_{name}", ROOT / "examples" / "pipelines" / f"{name}.py")


references = _load("loom_cpu_app_references",
                   ROOT / "tests" / "frontends" / "pipeline" / "pipeline_app_references.py")


def output_size(name, size):
    return tuple(size) + ((CHANNELS[name],) if name in CHANNELS else ())


def random_inputs(name, mod, size, salt=""):
    rng = np.random.default_rng(zlib.crc32(f"{name}{size}{salt}".encode()))
    if name == "gemm":
        n, m = size
        return {"A": rng.integers(0, 256, (m, mod.K), dtype=np.uint8),
                "B": rng.integers(0, 256, (mod.K, n), dtype=np.uint8)}
    return {"input": rng.integers(0, 256, mod.input_shape(size), dtype=np.uint8)}


def numpy_reference(name, mod, inputs, size):
    w, h = size
    if name == "gemm":
        return references.gemm(inputs["A"], inputs["B"])
    if name == "conv_layer":
        return references.conv_layer(inputs["input"], w, h, mod.weights())
    return getattr(references, name)(inputs["input"], w, h)
